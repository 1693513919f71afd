// The console's frame: the sign-in gate, the navigation, and the route table that maps `#/...` to a page.
// Each page lives in pages/ and reads only the public REST API (api.ts) and the streams (stream.ts).
import type { ComponentType } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { ClusterPage, ClustersPage } from './pages/clusters';
import { ConnectPage } from './pages/connect';
import { GroupPage, GroupsPage } from './pages/groups';
import { JobPage, JobsPage, SubmitJobPage } from './pages/jobs';
import { OverviewPage } from './pages/overview';
import { SchedulePage, SchedulesPage } from './pages/schedules';
import { NotebookPage, SqlPage } from './pages/sql';
import { match, useLocation, type Location, type PageProps } from './router';
import { SessionProvider, useSession } from './session';
import { SignIn } from './signin';
import { Loading, Toasts } from './ui';

const ROUTES: [pattern: string, page: ComponentType<PageProps>][] = [
  ['/', OverviewPage],
  ['/jobs', JobsPage],
  ['/jobs/new', SubmitJobPage],
  ['/jobs/:jobId', JobPage],
  ['/groups', GroupsPage],
  ['/groups/:groupId', GroupPage],
  ['/schedules', SchedulesPage],
  ['/schedules/:scheduleId', SchedulePage],
  ['/sql', SqlPage],
  ['/sql/notebooks/:notebookId', NotebookPage],
  ['/connect', ConnectPage],
  ['/clusters', ClustersPage],
  ['/clusters/:clusterId', ClusterPage],
];

const NAV: [path: string, label: string][] = [
  ['/', 'Overview'],
  ['/jobs', 'Jobs'],
  ['/groups', 'Groups'],
  ['/schedules', 'Schedules'],
  ['/sql', 'SQL'],
  ['/connect', 'Connect'],
  ['/clusters', 'Clusters'],
];

function resolve(loc: Location): { Page: ComponentType<PageProps>; params: Record<string, string> } | undefined {
  for (const [pattern, Page] of ROUTES) {
    const params = match(pattern, loc.path);
    if (params) return { Page, params };
  }
  return undefined;
}

const section = (path: string) => `/${path.split('/')[1] ?? ''}`;

function Frame() {
  const session = useSession();
  const loc = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  useEffect(() => setMenuOpen(false), [loc.path]);

  if (session.who === undefined) return <Loading what="Connecting to the service" />;
  if (session.who === null) return <SignIn />;

  const found = resolve(loc);
  const here = section(loc.path);
  return (
    <div class="frame">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a class="brand" href="#/">
          Spark orchestrator
        </a>
        <button
          type="button"
          class="menu-toggle btn btn-plain"
          aria-expanded={menuOpen}
          aria-controls="nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <nav id="nav" class={menuOpen ? 'nav nav-open' : 'nav'} aria-label="sections">
          {NAV.map(([path, label]) => (
            <a key={path} href={`#${path}`} aria-current={here === path ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="who">
          <span title={session.who.principal}>
            {session.who.authentication === 'on' ? session.who.principal : 'authentication off'} ·{' '}
            <span class="role">{session.who.role}</span>
          </span>
          {session.who.authentication === 'on' && (
            <button type="button" class="btn btn-plain" onClick={session.signOut}>
              Sign out
            </button>
          )}
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        {found ? (
          <found.Page key={loc.path} params={found.params} query={loc.query} />
        ) : (
          <p role="alert">
            No page at <code>#{loc.path}</code>. <a href="#/">Back to the overview</a>.
          </p>
        )}
      </main>
      <Toasts />
    </div>
  );
}

export function App() {
  return (
    <SessionProvider>
      <Frame />
    </SessionProvider>
  );
}
