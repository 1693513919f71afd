// Placeholder until this page is written.
import type { PageProps } from '../router';
import { PageHeader } from '../ui';

export function OverviewPage(_: PageProps) {
  return <PageHeader title="OverviewPage" />;
}
