// Placeholder until this page is written.
import type { PageProps } from '../router';
import { PageHeader } from '../ui';

export function SchedulesPage(_: PageProps) {
  return <PageHeader title="SchedulesPage" />;
}

export function SchedulePage(_: PageProps) {
  return <PageHeader title="SchedulePage" />;
}
