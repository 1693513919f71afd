// A mutex for workflow code: message handlers that await an activity and then change state take it, so
// two of them never interleave. Deterministic (plain promises), so it replays the same way.

export class Mutex {
  private tail: Promise<unknown> = Promise.resolve();

  /** Runs fn once every earlier holder has finished (whether it succeeded or failed). */
  runExclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.tail.then(fn);
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  /** Resolves once every holder so far has finished. */
  async idle(): Promise<void> {
    let seen: Promise<unknown>;
    do {
      seen = this.tail;
      await seen;
    } while (seen !== this.tail);
  }
}
