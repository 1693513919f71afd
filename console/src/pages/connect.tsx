// Spark Connect (`#/connect`): the chosen cluster's Connect server and its active sessions, live over the
// `/connect-servers` and `/connect-sessions` streams (a reload after each event keeps the lists whole). Operators
// may start or stop the server and end a session; everyone sees how clients connect.
import { useState } from 'preact/hooks';
import { del, get, post } from '../api';
import type { PageProps } from '../router';
import { useCan } from '../session';
import { useStream } from '../stream';
import { act, Button, ConfirmButton, Empty, ErrorBox, Field, PageHeader, StateBadge, Time, useAsync } from '../ui';
import { useClusters } from './sql-common';

interface ConnectServer {
  id: string;
  clusterId: string;
  clusterName: string;
  state: string;
  generation: number;
  error?: string;
  startTime?: number;
}

interface ConnectSession {
  id: string;
  clusterId: string;
  principal: string;
  state: string;
  startTime: number;
  lastUsed: number;
  calls: number;
}

export function ConnectPage(_: PageProps) {
  const canOperate = useCan('operator');
  const clusters = useClusters();
  const [clusterId, setClusterId] = useState<string>();
  const chosen = clusters.data?.find((c) => c.id === clusterId) ?? clusters.data?.find((c) => c.name === 'default');
  const id = chosen?.id ?? '';
  const servers = useAsync(
    (signal) =>
      id ? get<ConnectServer[]>(`/connect/server/${encodeURIComponent(id)}`, undefined, signal) : Promise.resolve([]),
    [id],
  );
  const sessions = useAsync(
    (signal) =>
      id ? get<ConnectSession[]>(`/connect/session/${encodeURIComponent(id)}`, undefined, signal) : Promise.resolve([]),
    [id],
  );
  const liveServers = useStream<ConnectServer>('/connect-servers', { clusterIds: id || undefined }, servers.reload);
  const liveSessions = useStream<ConnectSession>('/connect-sessions', { clusterIds: id || undefined }, sessions.reload);
  const server = servers.data?.[0];
  const url = `sc://${location.hostname}:15002/;token=<API key or token>${chosen && chosen.name !== 'default' ? `;cluster=${chosen.name}` : ''}`;

  return (
    <>
      <PageHeader title="Spark Connect" live={liveServers && liveSessions} />
      <section class="panel" aria-labelledby="connect-server-title">
        <h2 id="connect-server-title">Server</h2>
        <ErrorBox error={clusters.error ?? servers.error} />
        <Field label="Cluster">
          <select value={id} onChange={(e) => setClusterId((e.target as HTMLSelectElement).value)}>
            {(clusters.data ?? []).map((c) => (
              <option key={c.id} value={c.id}>
                {c.name}
              </option>
            ))}
          </select>
        </Field>
        <p>
          Clients connect with <code>{url}</code> (pyspark: <code>SparkSession.builder.remote(url).getOrCreate()</code>
          ); the first session starts the server.
        </p>
        {server ? (
          <p class="connect-server">
            <StateBadge state={server.state} /> generation {server.generation}, started <Time ms={server.startTime} />
            {server.error && <span class="muted"> — {server.error}</span>}
          </p>
        ) : (
          <Empty>No server runs on this cluster.</Empty>
        )}
        {canOperate && id && (
          <div class="actions">
            {(!server || server.state === 'FAILED') && (
              <Button
                onClick={() =>
                  void act('The Spark Connect server is starting', () =>
                    post(`/connect/server/${encodeURIComponent(id)}`, { async: true }),
                  ).then(servers.reload)
                }
              >
                Start server
              </Button>
            )}
            {server && (
              <ConfirmButton
                label="Stop server"
                question="Stop the Spark Connect server? Its sessions end."
                onConfirm={() =>
                  act('The Spark Connect server stopped', () =>
                    del(`/connect/server/${encodeURIComponent(server.id)}`),
                  ).then(servers.reload)
                }
              />
            )}
          </div>
        )}
      </section>
      <section class="panel" aria-labelledby="connect-sessions-title">
        <h2 id="connect-sessions-title">Active sessions</h2>
        <ErrorBox error={sessions.error} />
        {sessions.data?.length ? (
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Session</th>
                <th scope="col">Principal</th>
                <th scope="col">Started</th>
                <th scope="col">Last call</th>
                <th scope="col">Calls</th>
                {canOperate && <th scope="col">Actions</th>}
              </tr>
            </thead>
            <tbody>
              {sessions.data.map((s) => (
                <tr key={s.id}>
                  <td>
                    <code>{s.id}</code>
                  </td>
                  <td>{s.principal}</td>
                  <td>
                    <Time ms={s.startTime} />
                  </td>
                  <td>
                    <Time ms={s.lastUsed} />
                  </td>
                  <td>{s.calls}</td>
                  {canOperate && (
                    <td>
                      <ConfirmButton
                        label="End"
                        question={`End session ${s.id}? Its client's next call fails.`}
                        onConfirm={() =>
                          act('Session ended', () => del(`/connect/session/${encodeURIComponent(s.id)}`)).then(
                            sessions.reload,
                          )
                        }
                      />
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        ) : (
          <Empty>No active session.</Empty>
        )}
      </section>
    </>
  );
}
