// The versions a workflow gives its read-model writes (the rule is in domain/versions.ts).
import { workflowInfo } from '@temporalio/workflow';
import { nextVersion } from '../domain/versions';

export class WriteVersions {
  private readonly runBase: number;

  /** `last`: the last version used, carried over continue-as-new (0 for a new entity). */
  constructor(private lastVersion: number) {
    this.runBase = lastVersion;
  }

  /** The last version used (what the next run continues from). */
  get last(): number {
    return this.lastVersion;
  }

  next(): number {
    this.lastVersion = nextVersion(this.lastVersion, this.runBase, workflowInfo().historyLength);
    return this.lastVersion;
  }
}
