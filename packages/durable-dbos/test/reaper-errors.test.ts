import { DBOS } from '@dbos-inc/dbos-sdk'
import { createAgent } from '@kode/core'
import { createDurableAgents, type DurableAgents } from '@kode/durable-dbos'
import { createClient } from '@kode/providers'
import { createMemorySessionStore } from '@kode/session'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { dbosDatabaseUrl, dropSchema, freshDbosSchema } from './helpers/dbos.js'

// A reaper whose sweeps fail resumes no task of a dead worker: without an `onError`, a failed
// sweep is logged where DBOS logs its own failures, the logger the host gave DBOS.

const dbosSchema = freshDbosSchema()
/** What reached the host's DBOS logger at level error: the message, and the error logged. */
const logged: { message: unknown; error: unknown }[] = []
let sweepLogged: () => void = () => {}
const sweepFailure = new Promise<void>((resolve) => {
  sweepLogged = resolve
})
const isSweepFailure = (message: unknown) => typeof message === 'string' && message.includes('reaper sweep')
let durable: DurableAgents

beforeAll(async () => {
  DBOS.setConfig({
    name: 'kode-test',
    systemDatabaseUrl: dbosDatabaseUrl(),
    systemDatabaseSchemaName: dbosSchema,
    applicationVersion: 'kode-test-1',
    executorID: 'reaper-errors',
    logger: {
      info() {},
      debug() {},
      warn() {},
      error(message, metadata) {
        logged.push({ message, error: (metadata as { error?: unknown } | undefined)?.error })
        if (isSweepFailure(message)) sweepLogged()
      },
    },
  })
  const store = createMemorySessionStore()
  const client = createClient({
    api: 'openai-chat',
    model: 'm',
    apiKey: 'sk-test',
    baseUrl: 'http://127.0.0.1:9',
  })
  durable = createDurableAgents({
    store,
    agentFactory: ({ sessionId }) => createAgent({ client, store, sessionId }),
  })
  await DBOS.launch()
}, 60_000)

afterAll(async () => {
  await DBOS.shutdown()
  await dropSchema(dbosSchema)
})

test('a failed sweep is logged through DBOS.logger when the host gave no onError', async () => {
  // DBOS shut down: a sweep cannot list the workflows. (Shut down first: a sweep that began while
  // DBOS was shutting down fails with the pool's error instead, which says less.)
  await DBOS.shutdown()
  const reaper = durable.startReaper({ intervalMs: 10 })
  await sweepFailure
  await reaper.stop()
  const failure = logged.find((entry) => isSweepFailure(entry.message))!
  expect(failure.message).toMatch(
    /^a reaper sweep of the kode\.task tasks failed; the next sweep tries again: .*must be called before running listWorkflows/,
  )
  expect(failure.error).toBeInstanceOf(Error)
  expect((failure.error as Error).cause).toBeInstanceOf(Error)
})

test("an onError that throws stops neither the reaper nor the host's process", async () => {
  // DBOS is shut down (see above): every sweep fails.
  let reported = 0
  const reaper = durable.startReaper({
    intervalMs: 10,
    onError: () => {
      reported++
      throw new Error('the host logger is down')
    },
  })
  while (reported < 2) await new Promise((resolve) => setTimeout(resolve, 10))
  await reaper.stop()
  // What onError threw became no unhandled rejection (vitest fails the run on one).
  await new Promise((resolve) => setTimeout(resolve, 50))
  expect(reported).toBeGreaterThanOrEqual(2)
})
