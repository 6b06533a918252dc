import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { projects } from './vitest.workspace'

export default defineConfig({
  test: {
    projects,
    // Vitest's default is one worker fewer than the cores, which on a two-core machine runs every
    // file one after another. Most test time waits on child processes (MCP servers, Postgres, a
    // browser, the CLI), so one worker per core finishes the suite in about two thirds of the time.
    maxWorkers: Math.max(2, availableParallelism()),
    minWorkers: 1,
    // Only the projects that share their imports use the threads pool (see vitest.workspace.ts).
    poolOptions: { threads: { isolate: false } },
  },
})
