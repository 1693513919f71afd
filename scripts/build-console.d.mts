// Types of scripts/build-console.mjs for the TypeScript callers (test/global-setup.ts).
export function buildConsole(outdir?: string): Promise<string[]>;
