// The driver contract moved to domain/driver.ts (workflows speak it). This re-export keeps the old
// path importable for code written against it; import from domain/driver.ts instead.
export * from '../../domain/driver';
