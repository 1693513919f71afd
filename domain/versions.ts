// Versions of read-model writes. The projection keeps a write only if its version is newer than the
// stored one. A plain counter is not enough: when a workflow task fails (a signal arrived as it tried to
// complete), its local-activity writes have already happened, and the next attempt, now seeing the
// signal, reuses the same numbers for different content, which the projection then drops. Tying the
// version to the history length keeps a later attempt's versions above an earlier attempt's, and stays
// deterministic, since a completed task always replays with the history length it had.

/** Writes one workflow task may make before versions of two tasks could overlap. */
export const VERSION_STRIDE = 1_000;

/**
 * The next version after `last`: above it, and at least `runBase + historyLength × VERSION_STRIDE`,
 * where `runBase` is the last version of the previous run (continue-as-new), so versions keep growing.
 */
export const nextVersion = (last: number, runBase: number, historyLength: number): number =>
  Math.max(last + 1, runBase + historyLength * VERSION_STRIDE);
