// The SQL engines of one cluster (GET /sql/engine/{clusterId}) and their state, polled every few seconds (the
// engines have no stream). Operators may start an engine (POST, async: the list shows it STARTING, then
// RUNNING) and stop one (DELETE); viewers only see the states.
import { del, get, post } from '../api';
import { useCan } from '../session';
import { act, Button, ConfirmButton, ErrorBox, useAsync, useInterval } from '../ui';
import { ENGINE_LABEL, ENGINES, SqlStateBadge, type SqlEngineInfo } from './sql-common';

export function EnginesPanel({ clusterId, clusterName }: { clusterId: string; clusterName: string }) {
  const canOperate = useCan('operator');
  const engines = useAsync(
    (signal) => get<SqlEngineInfo[]>(`/sql/engine/${encodeURIComponent(clusterId)}`, undefined, signal),
    [clusterId],
  );
  useInterval(engines.reload, 3000);
  const byType = new Map((engines.data ?? []).map((e) => [e.type, e]));
  return (
    <section class="panel sql-engines" aria-labelledby="sql-engines-title">
      <h2 id="sql-engines-title">Engines of {clusterName}</h2>
      <ErrorBox error={engines.error} />
      <ul class="sql-engine-list">
        {ENGINES.map((type) => {
          const e = byType.get(type);
          return (
            <li key={type} class="sql-engine">
              <span class="sql-engine-name">{ENGINE_LABEL[type]}</span>
              {e ? (
                <SqlStateBadge state={e.state} />
              ) : (
                <span class="badge badge-muted">{engines.data ? 'STOPPED' : '…'}</span>
              )}
              {canOperate && (
                <span class="sql-engine-actions">
                  {(!e || e.state === 'FAILED') && (
                    <Button
                      aria-label={`Start ${ENGINE_LABEL[type]}`}
                      onClick={() =>
                        void act(`${ENGINE_LABEL[type]} is starting`, () =>
                          post(`/sql/engine/${encodeURIComponent(clusterId)}`, { type, async: true }),
                        ).then(engines.reload)
                      }
                    >
                      Start
                    </Button>
                  )}
                  {e && (
                    <ConfirmButton
                      label="Stop"
                      question={`Stop ${ENGINE_LABEL[type]}?`}
                      onConfirm={() =>
                        act(`${ENGINE_LABEL[type]} stopped`, () => del(`/sql/engine/${encodeURIComponent(e.id)}`)).then(
                          engines.reload,
                        )
                      }
                    />
                  )}
                </span>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}
