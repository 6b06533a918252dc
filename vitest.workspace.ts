import { fileURLToPath } from 'node:url'
import { configDefaults, type TestProjectInlineConfiguration } from 'vitest/config'

const root = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** Tests import the packages' sources, so `pnpm test` needs no build first. */
export const alias = {
  '@kode/protocol/helpers': root('./packages/protocol/src/helpers.ts'),
  '@kode/protocol': root('./packages/protocol/src/index.ts'),
  '@kode/providers/adapter': root('./packages/providers/src/adapter/index.ts'),
  '@kode/providers/testing': root('./packages/providers/src/testing/index.ts'),
  '@kode/providers': root('./packages/providers/src/index.ts'),
  '@kode/session/file': root('./packages/session/src/file.ts'),
  '@kode/session-postgres': root('./packages/session-postgres/src/index.ts'),
  '@kode/session': root('./packages/session/src/index.ts'),
  '@kode/core': root('./packages/core/src/index.ts'),
  '@kode/mcp': root('./packages/mcp/src/index.ts'),
  '@kode/durable-dbos': root('./packages/durable-dbos/src/index.ts'),
}

const project = (dir: string, name: string, extra: { pool?: 'threads'; exclude?: string[] } = {}) => ({
  resolve: { alias },
  test: {
    name,
    root: root(`./${dir}`),
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    ...(extra.exclude ? { exclude: [...configDefaults.exclude, ...extra.exclude] } : {}),
    ...(extra.pool ? { pool: extra.pool } : {}),
  },
})

/**
 * The packages' unit tests, and the MCP and CLI tests, run in worker threads that keep their
 * imports from one file to the next (`vitest.config.ts` turns the threads pool's isolation off):
 * importing the packages' sources once per worker, not once per file, takes a half to two thirds
 * off the unit tests' CPU time, and a quarter off the MCP and CLI tests'. They
 * leave nothing behind for the next file (providers registered under names of their own, globals
 * restored). A file that mocks a module cannot share its imports and runs isolated, in a project
 * of its own.
 */
const shared = (dir: string, name: string, exclude?: string[]) =>
  project(dir, name, { pool: 'threads', ...(exclude ? { exclude } : {}) })
/** The session tests that replace `node:fs/promises` with a mock. */
const mockedFs = ['test/file-store-hostile.test.ts']

/** The workspace's test projects; `vitest.config.ts` runs them all. */
export const projects: TestProjectInlineConfiguration[] = [
  shared('packages/protocol', 'protocol'),
  shared('packages/providers', 'providers'),
  shared('packages/session', 'session', mockedFs),
  {
    resolve: { alias },
    test: { name: 'session-mocked-fs', root: root('./packages/session'), include: mockedFs },
  },
  shared('packages/core', 'core'),
  {
    resolve: { alias },
    test: {
      name: 'mcp',
      pool: 'threads',
      root: root('./packages/mcp'),
      include: ['test/**/*.test.ts'],
      // The tests start real MCP servers as child processes.
      testTimeout: 60_000,
    },
  },
  {
    resolve: { alias },
    test: {
      name: 'session-postgres',
      root: root('./packages/session-postgres'),
      include: ['test/**/*.test.ts'],
      // One real Postgres for the run: started before the first test, stopped after the last.
      globalSetup: ['test/global-setup.ts'],
      hookTimeout: 60_000,
      testTimeout: 30_000,
    },
  },
  {
    resolve: { alias },
    test: {
      name: 'durable-dbos',
      root: root('./packages/durable-dbos'),
      include: ['test/**/*.test.ts'],
      // The same real Postgres as session-postgres's tests, started the same way.
      globalSetup: ['../session-postgres/test/global-setup.ts'],
      hookTimeout: 60_000,
      testTimeout: 60_000,
    },
  },
  project('bench', 'bench'),
  project('examples/custom-provider', 'custom-provider'),
  project('examples/codeact', 'codeact'),
  project('examples/quickstart', 'quickstart'),
  {
    resolve: { alias },
    test: {
      name: 'cli',
      pool: 'threads',
      root: root('./examples/cli'),
      include: ['test/**/*.test.ts'],
      // The process tests run the built binary: build it once first.
      globalSetup: ['test/process/global-setup.ts'],
      testTimeout: 60_000,
    },
  },
  {
    // shell-blocks.test.ts imports the CLI's sources, which import the packages: resolve them to
    // their sources too, so the test needs no build of the packages (a clean clone has none).
    resolve: { alias },
    test: {
      name: 'docs',
      root: root('./test/docs'),
      include: ['*.test.ts'],
      hookTimeout: 120_000,
      testTimeout: 60_000,
      // shell-blocks.test.ts runs `pnpm kode ...` from the docs: build the CLI once first.
      globalSetup: ['../../examples/cli/test/process/global-setup.ts'],
    },
  },
  {
    resolve: { alias },
    test: {
      name: 'web',
      root: root('./examples/web'),
      include: ['test/**/*.test.ts'],
      // The tests serve the built page: build it once first. The cross-host tests share a real
      // Postgres, started as for the session-postgres tests.
      globalSetup: ['test/global-setup.ts', '../../packages/session-postgres/test/global-setup.ts'],
      hookTimeout: 60_000,
      testTimeout: 60_000,
    },
  },
  {
    test: {
      name: 'imports',
      root: root('./test/imports'),
      include: ['*.test.ts'],
    },
  },
  {
    resolve: { alias },
    test: {
      name: 'runtimes',
      root: root('./test/runtimes'),
      include: ['*.test.ts'],
      testTimeout: 60_000,
    },
  },
  {
    test: {
      name: 'packaging',
      root: root('./test/packaging'),
      include: ['*.test.ts'],
      testTimeout: 120_000,
      hookTimeout: 600_000,
    },
  },
]

export default projects
