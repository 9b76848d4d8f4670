// After the jest run: stops the shared Postgres cluster of spec/global-setup.ts (by its pid) and
// removes its dir.
export default async function globalTeardown(): Promise<void> {
  await globalThis.fwSharedPostgres?.stop();
  globalThis.fwSharedPostgres = undefined;
}
