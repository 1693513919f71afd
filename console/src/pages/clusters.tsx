// Clusters: the list (`#/clusters`, searchable and sortable, with a form for a new one) and one cluster
// (`#/clusters/:clusterId`, every field, edit and delete). Which types there are, and each one's settings, come
// from GET /cluster/types. Creating, editing and deleting need the admin role
// (the same rule as api/auth/roles.ts): the buttons are not shown to others. Secrets come masked from the API
// and the page only says whether one is stored.
import { Fragment, type ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { del, get, post, put, type Page } from '../api';
import { href, navigate, type PageProps } from '../router';
import { useCan } from '../session';
import type { Cluster } from '../types';
import {
  Button,
  ConfirmButton,
  Empty,
  ErrorBox,
  errorText,
  Loading,
  notify,
  PageHeader,
  Pager,
  Pre,
  Table,
  Time,
  useAsync,
  type Column,
} from '../ui';
import { ClusterForm, SETTING_LOOKS } from './clusters-form';
import { MASK, toValues, type ClusterTypeInfo } from './clusters-model';
import './clusters.css';

const PAGE_SIZE = 20;

/** GET /cluster/types: the types and the settings of each. */
const useClusterTypes = () =>
  useAsync((signal) => get<{ types: ClusterTypeInfo[] }>('/cluster/types', undefined, signal), []);

const COLUMNS: Column<Cluster>[] = [
  { label: 'Name', sort: 'name', render: (c) => <a href={href(`/clusters/${encodeURIComponent(c.id)}`)}>{c.name}</a> },
  { label: 'Type', sort: 'type', render: (c) => <span class="badge badge-muted">{c.type}</span> },
  { label: 'Spark master', render: (c) => <code>{c.sparkMaster}</code>, class: 'hide-narrow' },
  { label: 'Description', render: (c) => c.description || <span class="muted">—</span>, class: 'hide-narrow' },
  { label: 'Created', sort: 'createdTime', render: (c) => <Time ms={c.createdTime} />, class: 'hide-narrow' },
];

export function ClustersPage({ query }: PageProps) {
  const isAdmin = useCan('admin');
  const page = Number(query.get('page') ?? 0) || 0;
  const sort = query.get('sort') ?? 'name,asc';
  const search = query.get('search') ?? '';
  const [creating, setCreating] = useState(false);
  const types = useClusterTypes();
  const list = useAsync(
    (signal) => get<Page<Cluster>>('/cluster', { page, size: PAGE_SIZE, sort, search }, signal),
    [page, sort, search],
  );
  const go = (q: Record<string, string | undefined>) =>
    navigate('/clusters', { page: String(page), sort, search, ...q }, true);

  return (
    <>
      <PageHeader title="Clusters">
        {isAdmin && !creating && (
          <Button variant="primary" onClick={() => setCreating(true)}>
            New cluster
          </Button>
        )}
      </PageHeader>
      {creating && <ErrorBox error={types.error} />}
      {creating && types.data && (
        <section class="panel" aria-label="new cluster">
          <h2 class="panel-title">New cluster</h2>
          <ClusterForm
            initial={toValues()}
            types={types.data.types}
            editing={false}
            submitLabel="Create cluster"
            onCancel={() => setCreating(false)}
            onSubmit={async (body) => {
              const { clusterId } = await post<{ clusterId: string }>('/cluster', body);
              notify(`cluster ${String(body.name)} created`);
              navigate(`/clusters/${encodeURIComponent(clusterId)}`);
            }}
          />
        </section>
      )}
      <form
        class="toolbar clusters-search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const value = new FormData(e.currentTarget).get('search');
          go({ search: String(value ?? ''), page: '0' });
        }}
      >
        <label class="field">
          <span class="field-label">Search names and descriptions</span>
          <input name="search" type="search" defaultValue={search} />
        </label>
        <Button type="submit">Search</Button>
      </form>
      <ErrorBox error={list.error} />
      {!list.data && !list.error ? (
        <Loading what="Loading clusters" />
      ) : (
        list.data && (
          <>
            <Table
              caption="clusters"
              columns={COLUMNS}
              rows={list.data.content}
              rowKey={(c) => c.id}
              sort={sort}
              onSort={(s) => go({ sort: s, page: '0' })}
              empty={search ? 'No cluster matches the search.' : 'No clusters.'}
            />
            <Pager
              page={page}
              totalPages={list.data.totalPages}
              total={list.data.totalElements}
              onPage={(p) => go({ page: String(p) })}
            />
          </>
        )
      )}
    </>
  );
}

/** A stored secret: whether it is set, never its value. */
const secretText = (v: string | undefined) =>
  v === MASK ? <span class="badge badge-ok">set (hidden)</span> : <span class="muted">not set</span>;

const text = (v: string | number | undefined) =>
  v === undefined || v === '' ? <span class="muted">—</span> : <span class="wrap">{String(v)}</span>;

/** A definition list of label → value pairs. */
function KV({ rows }: { rows: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {rows.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

/** One of a type's settings as the details show it, by its kind. */
function settingView(kind: ClusterTypeInfo['kinds'][string], value: unknown, label: string): ComponentChildren {
  if (kind === 'secret') return secretText(value as string | undefined);
  if (kind === 'list') return text(Array.isArray(value) ? value.join(', ') : undefined);
  if (kind === 'map')
    return value && Object.keys(value).length ? (
      <Pre
        value={Object.entries(value as Record<string, unknown>)
          .map(([k, x]) => `${k}=${String(x)}`)
          .join('\n')}
        label={label}
      />
    ) : (
      text(undefined)
    );
  return SETTING_LOOKS[label]?.multiline && value ? (
    <Pre value={String(value)} label={label} />
  ) : (
    text(value as string | number | undefined)
  );
}

function Details({ c, type }: { c: Cluster; type?: ClusterTypeInfo }) {
  const own = (type?.settings ?? []).map(
    (field) =>
      [
        SETTING_LOOKS[field]?.label ?? field,
        settingView(type!.kinds[field] ?? 'text', (c as Record<string, unknown>)[field], field),
      ] as [string, ComponentChildren],
  );
  const rows: [string, ComponentChildren][] = [
    ['Id', <code>{c.id}</code>],
    ['Type', type ? `${c.type}: ${type.title}` : c.type],
    ['Spark master', <code>{c.sparkMaster}</code>],
    ['Deploy mode', c.sparkDeployMode],
    ...(type?.url ? ([[type.url, <code>{c.url}</code>]] as [string, ComponentChildren][]) : []),
    ...own,
    ['Spark storage', text(c.sparkStorage)],
    ['Metastore name', text(c.metastoreName)],
    ['Created', <Time ms={c.createdTime} />],
  ];
  const storages = Object.entries(c.storages);
  const memory = Object.entries(c.memorySettings);
  return (
    <div class="cluster-details">
      <section class="panel" aria-labelledby="cluster-general">
        <h2 id="cluster-general" class="panel-title">
          Settings
        </h2>
        <KV rows={rows} />
      </section>
      <section class="panel" aria-labelledby="cluster-resources">
        <h2 id="cluster-resources" class="panel-title">
          Resources
        </h2>
        <h3 class="sub">Memory settings</h3>
        <KV rows={memory.map(([k, v]) => [k, String(v)])} />
        <h3 class="sub">Resource quota</h3>
        {c.resourceQuota && Object.keys(c.resourceQuota).length ? (
          <KV rows={Object.entries(c.resourceQuota)} />
        ) : (
          <p class="muted">No quota.</p>
        )}
        <h3 class="sub">Limit range</h3>
        {c.limitRange && Object.keys(c.limitRange).length ? (
          <Pre value={c.limitRange} label="limit range" />
        ) : (
          <p class="muted">None.</p>
        )}
      </section>
      <section class="panel" aria-labelledby="cluster-storages">
        <h2 id="cluster-storages" class="panel-title">
          Storages
        </h2>
        {storages.length === 0 ? (
          <p class="muted">No storages.</p>
        ) : (
          storages.map(([key, s]) => (
            <div key={key} class="storage-view">
              <h3 class="sub">
                {key}
                {key === c.sparkStorage && <span class="muted"> (Spark storage)</span>}
              </h3>
              <dl class="kv">
                <dt>Endpoint</dt>
                <dd>{text(s.endpoint)}</dd>
                <dt>Region</dt>
                <dd>{text(s.region)}</dd>
                <dt>Spark bucket</dt>
                <dd>{text(s.sparkBucket)}</dd>
                <dt>Data bucket</dt>
                <dd>{text(s.dataBucket)}</dd>
                <dt>Extra buckets</dt>
                <dd>{text(s.extraBuckets?.join(', '))}</dd>
                <dt>Access key</dt>
                <dd>{secretText(s.accessKey)}</dd>
                <dt>Secret key</dt>
                <dd>{secretText(s.secretKey)}</dd>
              </dl>
            </div>
          ))
        )}
      </section>
      <section class="panel" aria-labelledby="cluster-spark">
        <h2 id="cluster-spark" class="panel-title">
          Default application config
        </h2>
        {c.defaultApplicationConfig ? (
          <Pre value={c.defaultApplicationConfig} label="default application config" />
        ) : (
          <p class="muted">None.</p>
        )}
      </section>
    </div>
  );
}

export function ClusterPage({ params }: PageProps) {
  const id = params.clusterId;
  const isAdmin = useCan('admin');
  const [editing, setEditing] = useState(false);
  const [deleteError, setDeleteError] = useState<string>();
  const cluster = useAsync((signal) => get<Cluster>(`/cluster/${encodeURIComponent(id)}`, undefined, signal), [id]);
  const types = useClusterTypes();
  const c = cluster.data;
  const type = types.data?.types.find((t) => t.type === c?.type);

  return (
    <>
      <p class="crumbs">
        <a href="#/clusters">← Clusters</a>
      </p>
      <PageHeader
        title={
          c ? (
            <>
              {c.name} <span class="badge badge-muted">{c.type}</span>
            </>
          ) : (
            'Cluster'
          )
        }
      >
        {c && isAdmin && !editing && (
          <>
            <Button onClick={() => setEditing(true)}>Edit</Button>
            <ConfirmButton
              label="Delete"
              question={`Delete cluster ${c.name}?`}
              onConfirm={async () => {
                setDeleteError(undefined);
                try {
                  await del(`/cluster/${encodeURIComponent(id)}`);
                  notify(`cluster ${c.name} deleted`);
                  navigate('/clusters');
                } catch (err) {
                  setDeleteError(errorText(err));
                }
              }}
            />
          </>
        )}
      </PageHeader>
      <ErrorBox error={deleteError} />
      <ErrorBox error={cluster.error} />
      {!c && !cluster.error && <Loading what="Loading the cluster" />}
      {c && c.description && !editing && <p class="description">{c.description}</p>}
      <ErrorBox error={types.error} />
      {c && editing && types.data && (
        <section class="panel" aria-label="edit cluster">
          <h2 class="panel-title">Edit {c.name}</h2>
          <ClusterForm
            initial={toValues(c)}
            types={types.data.types}
            editing
            submitLabel="Save changes"
            onCancel={() => setEditing(false)}
            onSubmit={async (body) => {
              await put(`/cluster/${encodeURIComponent(id)}`, body);
              notify(`cluster ${String(body.name)} saved`);
              setEditing(false);
              cluster.reload();
            }}
          />
        </section>
      )}
      {c && !editing && <Details c={c} type={type} />}
      {!c && cluster.error && (
        <Empty>
          Back to the <a href="#/clusters">list of clusters</a>.
        </Empty>
      )}
    </>
  );
}
