// A duration in the words of the errors about broken clusters: "10 min", "4 s", "500 ms".

export const inWords = (ms: number): string =>
  ms >= 60_000 && ms % 60_000 === 0 ? `${ms / 60_000} min` : ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`;
