// Placeholder until this page is written.
import type { PageProps } from '../router';
import { PageHeader } from '../ui';

export function GroupsPage(_: PageProps) {
  return <PageHeader title="GroupsPage" />;
}

export function GroupPage(_: PageProps) {
  return <PageHeader title="GroupPage" />;
}
