// Placeholder until this page is written.
import type { PageProps } from '../router';
import { PageHeader } from '../ui';

export function ClustersPage(_: PageProps) {
  return <PageHeader title="ClustersPage" />;
}

export function ClusterPage(_: PageProps) {
  return <PageHeader title="ClusterPage" />;
}
