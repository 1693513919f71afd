// Every workflow the worker registers. Workflows import activities with `import type` only.
export {};
