import { fileURLToPath } from 'node:url'
import type { TestProjectInlineConfiguration } from 'vitest/config'

const root = (path: string) => fileURLToPath(new URL(path, import.meta.url))

/** Tests import the packages' sources, so `pnpm test` needs no build first. */
export const alias = {
  '@kode/protocol/helpers': root('./packages/protocol/src/helpers.ts'),
  '@kode/protocol': root('./packages/protocol/src/index.ts'),
  '@kode/providers/testing': root('./packages/providers/src/testing/index.ts'),
  '@kode/providers': root('./packages/providers/src/index.ts'),
  '@kode/session': root('./packages/session/src/index.ts'),
  '@kode/core': root('./packages/core/src/index.ts'),
  '@kode/mcp': root('./packages/mcp/src/index.ts'),
}

const project = (dir: string, name: string) => ({
  resolve: { alias },
  test: {
    name,
    root: root(`./${dir}`),
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
  },
})

/** The workspace's test projects; `vitest.config.ts` runs them all. */
export const projects: TestProjectInlineConfiguration[] = [
  project('packages/protocol', 'protocol'),
  project('packages/providers', 'providers'),
  project('packages/session', 'session'),
  project('packages/core', 'core'),
  {
    resolve: { alias },
    test: {
      name: 'mcp',
      root: root('./packages/mcp'),
      include: ['test/**/*.test.ts'],
      // The tests start real MCP servers as child processes.
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
      root: root('./examples/cli'),
      include: ['test/**/*.test.ts'],
      // The process tests run the built binary: build it once first.
      globalSetup: ['test/process/global-setup.ts'],
      testTimeout: 60_000,
    },
  },
  {
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
