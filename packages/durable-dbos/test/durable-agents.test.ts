import { DBOS, DBOSClient, Error as DBOSErrors } from '@dbos-inc/dbos-sdk'
import { AgentError, createAgent, defineTool, type UserInput } from '@kode/core'
import { createDurableAgents, type DurableAgents, DurableTaskError } from '@kode/durable-dbos'
import type { HistoryEvent } from '@kode/protocol'
import { createClient, type LLMClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { SessionError, type SessionStore } from '@kode/session'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { Type } from '@sinclair/typebox'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest'
import { callTools, reply } from '../../../test/model/replies.js'
import { reapOnce } from '../src/reaper.js'
import {
  dbosDatabaseUrl,
  dropSchema,
  freshDbosSchema,
  freshSchema,
  launchDbos,
  postgresUrl,
} from './helpers/dbos.js'

// Tasks as DBOS workflows in one process against the real Postgres: what a host sees when no
// worker dies. The crash and takeover run with real worker processes (worker-kill.test.ts).

let server: SseTestServer
let store: SessionStore
let durable: DurableAgents
let strays: DurableAgents
let slowStart: DurableAgents
let leakyRun: DurableAgents
let leakyFactory: DurableAgents
let leakyHook: DurableAgents
let closedStore: DurableAgents
let badClose: DurableAgents
let oddHook: DurableAgents
let noAgent: DurableAgents
/** Tasks whose lease appends fail while `failAppend` says so, as a connection cut under them does. */
let flaky: DurableAgents
/** Which of `flaky`'s lease appends fail (default none). */
let failAppend: (events: readonly HistoryEvent[]) => boolean = () => false
/** Tasks on a store that takes records of 2 000 bytes at most. */
let tight: DurableAgents
let tightStore: SessionStore
/** What `oddHook`'s hook throws next. */
let oddThrown: unknown
const API_KEY = 'sk-live-0123456789abcdefABCDEF'

/** An error as an HTTP client throws one: the request's headers on it and on its cause. */
function leakingError(where: string): Error {
  const request = { url: 'https://api.example.test/v1/chat', headers: { Authorization: `Bearer ${API_KEY}` } }
  const cause = Object.assign(new Error(`socket hang up (x-api-key: ${API_KEY})`), { config: request })
  return Object.assign(new Error(`${where} failed: POST with Authorization: Bearer ${API_KEY}`, { cause }), {
    code: 'ECONNRESET',
    request,
  })
}
/** Holds `slowStart`'s session creation until `openCreate()`. */
let openCreate: () => void = () => {}
const createGate = new Promise<void>((resolve) => {
  openCreate = resolve
})
let gated: DurableAgents
/** Tasks whose first `create` of session `in-order` waits for `openInOrder()`. */
let inOrder: DurableAgents
let openInOrder: () => void = () => {}
const inOrderGate = new Promise<void>((resolve) => {
  openInOrder = resolve
})
/** Tasks whose session creation waits for `openStuckTurns()`: pending, not begun, session free. */
let stuckTurns: DurableAgents
let openStuckTurns: () => void = () => {}
const stuckTurnsGate = new Promise<void>((resolve) => {
  openStuckTurns = resolve
})
/** How often `inOrder`'s tasks gave session `in-order`'s writer back. */
let inOrderReleases = 0
let stuck: DurableAgents
let stuckQueued: DurableAgents
let openQueuedGate: () => void = () => {}
const queuedGate = new Promise<void>((resolve) => {
  openQueuedGate = resolve
})
/** Holds `stuck`'s session creation until `openStuck()`: its task stays pending, its session free. */
let openStuck: () => void = () => {}
const stuckGate = new Promise<void>((resolve) => {
  openStuck = resolve
})
/** Lets `gated`'s factory return its agent; `factoryEntered` resolves once it was called. */
let openGate: () => void = () => {}
let factoryEntered: Promise<void> = Promise.resolve()
const schema = freshSchema()
const dbosSchema = freshDbosSchema()
const written: string[] = []
/** Polls for results often, so the tests do not wait out DBOS's default second. */
const FAST = { pollingIntervalMs: 50 }

const writeNote = defineTool({
  name: 'write_note',
  description: 'Writes a note',
  parameters: Type.Object({ text: Type.String() }),
  needsApproval: true,
  execute: ({ text }) => {
    written.push(text)
    return 'noted'
  },
})

let enterFactory: () => void = () => {}

/** How often `tally` ran. */
let tallied = 0
const tally = defineTool({
  name: 'tally',
  description: 'Counts',
  parameters: Type.Object({}),
  execute: () => `tallied ${++tallied}`,
})

/** Makes the session's lease expire and another writer take the session, as a long outage does. */
const stealLease = defineTool({
  name: 'steal_lease',
  description: 'Takes the session from its writer',
  parameters: Type.Object({}),
  execute: async (_args, ctx) => {
    const client = new pg.Client({ connectionString: postgresUrl() })
    await client.connect()
    try {
      await client.query(
        `update "${schema}".sessions set lease_expires_at = now() - interval '1 second' where id = $1`,
        [ctx.sessionId],
      )
    } finally {
      await client.end()
    }
    const taken = await store.acquire(ctx.sessionId)
    await taken.release()
    return 'taken'
  },
})

/** What the pg driver throws for a connection the server or the network ended. */
const connectionLost = () => new Error('Connection terminated unexpectedly')

/** The structured answer `durable`'s tasks may ask for (`output: 'weather'`). */
const Weather = Type.Object(
  { city: Type.String(), celsius: Type.Number() },
  { title: 'Weather', additionalProperties: false },
)

/** Signals of the calls of `wait_for_cancel` that started, in order. */
const waiting: AbortSignal[] = []
let waitStarted: (() => void) | undefined
/** Runs until the task is interrupted, as a long tool call does. */
const waitForCancel = defineTool({
  name: 'wait_for_cancel',
  description: 'Waits until interrupted',
  parameters: Type.Object({}),
  execute: (_args, ctx) =>
    new Promise<string>((_resolve, reject) => {
      waiting.push(ctx.signal)
      waitStarted?.()
      ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true })
    }),
})

beforeAll(async () => {
  server = await createSseTestServer()
  store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, leaseMs: 2_000 })
  const client = createClient({ api: 'openai-chat', model: 'gpt-4o', apiKey: 'sk-test', baseUrl: server.url })
  await launchDbos({
    schema: dbosSchema,
    executorId: 'in-process',
    register: () => {
      durable = createDurableAgents({
        store,
        agentFactory: ({ sessionId, store }) =>
          createAgent({ client, store, sessionId, tools: [writeNote, waitForCancel] }),
        outputs: { weather: Weather },
      })
      gated = createDurableAgents({
        name: 'kode.gated',
        store,
        agentFactory: async ({ sessionId, store }) => {
          const gate = new Promise<void>((resolve) => {
            openGate = resolve
          })
          enterFactory()
          await gate
          return createAgent({ client, store, sessionId })
        },
      })
      // The first task's begin is held in its `create`: the second task, started after it, finds
      // the session free first.
      let creates = 0
      inOrder = createDurableAgents({
        name: 'kode.in-order',
        lockRetryMs: 20,
        store: {
          ...store,
          create: async (init) => {
            if (init?.id === 'in-order' && creates++ === 0) await inOrderGate
            return store.create(init)
          },
          acquire: async (id) => {
            const lease = await store.acquire(id)
            if (id !== 'in-order') return lease
            return {
              ...lease,
              append: (events) => lease.append(events),
              release: () => {
                inOrderReleases++
                return lease.release()
              },
            }
          },
        },
        agentFactory: ({ sessionId, store }) => createAgent({ client, store, sessionId }),
      })
      stuckTurns = createDurableAgents({
        name: 'kode.stuck-turns',
        store: {
          ...store,
          create: async (init) => {
            await stuckTurnsGate
            return store.create(init)
          },
        },
        agentFactory: ({ sessionId, store }) => createAgent({ client, store, sessionId }),
      })
      slowStart = createDurableAgents({
        name: 'kode.slow-start',
        // The session is created only once the test lets it: the task is "just starting".
        store: {
          ...store,
          create: async (init) => {
            await createGate
            return store.create(init)
          },
        },
        agentFactory: ({ sessionId, store }) => createAgent({ client, store, sessionId }),
      })
      stuck = createDurableAgents({
        name: 'kode.stuck',
        store: {
          ...store,
          create: async (init) => {
            await stuckGate
            return store.create(init)
          },
        },
        agentFactory: ({ sessionId, store }) => createAgent({ client, store, sessionId }),
      })
      // Tasks started on the host's queue (registered once DBOS runs), stuck the same way.
      stuckQueued = createDurableAgents({
        name: 'kode.stuck-queued',
        queueName: 'kode-test-queue',
        store: {
          ...store,
          create: async (init) => {
            await queuedGate
            return store.create(init)
          },
        },
        agentFactory: ({ sessionId, store }) => createAgent({ client, store, sessionId }),
      })
      flaky = createDurableAgents({
        name: 'kode.flaky',
        storeRetry: { baseDelayMs: 10 },
        store: {
          ...store,
          acquire: async (id) => {
            const lease = await store.acquire(id)
            return {
              ...lease,
              sessionId: lease.sessionId,
              append: (events) =>
                failAppend(events) ? Promise.reject(connectionLost()) : lease.append(events),
              release: () => lease.release(),
            }
          },
        },
        agentFactory: ({ sessionId, store }) =>
          createAgent({ client, store, sessionId, tools: [tally, stealLease] }),
      })
      tightStore = createPostgresSessionStore({
        connectionString: postgresUrl(),
        schema,
        maxRecordBytes: 2_000,
      })
      tight = createDurableAgents({
        name: 'kode.tight',
        store: tightStore,
        agentFactory: ({ sessionId, store }) => createAgent({ client, store, sessionId }),
      })
      // A factory that builds no agent (a host's missing return).
      noAgent = createDurableAgents({
        name: 'kode.no-agent',
        store,
        agentFactory: () => undefined as never,
      })
      // A hook that throws whatever the test gives it.
      oddHook = createDurableAgents({
        name: 'kode.odd-hook',
        store,
        agentFactory: ({ sessionId, store }) =>
          createAgent({
            client,
            store,
            sessionId,
            hooks: {
              beforeModelCall: () => {
                throw oddThrown
              },
            },
          }),
      })
      // A custom model client that fails as an HTTP library does: the request, headers and all,
      // on the error and its cause, the key in the message too.
      const leakyClient: LLMClient = {
        api: client.api,
        provider: client.provider,
        model: client.model,
        modelInfo: client.modelInfo,
        stream: () => {
          throw leakingError('stream')
        },
        complete: () => Promise.reject(leakingError('complete')),
      }
      leakyRun = createDurableAgents({
        name: 'kode.leaky-run',
        store,
        agentFactory: ({ sessionId, store }) => createAgent({ client: leakyClient, store, sessionId }),
      })
      leakyHook = createDurableAgents({
        name: 'kode.leaky-hook',
        store,
        agentFactory: ({ sessionId, store }) =>
          createAgent({
            client,
            store,
            sessionId,
            hooks: {
              beforeModelCall: () => {
                throw new Error(`the gateway refused Authorization: Bearer ${API_KEY}`)
              },
            },
          }),
      })
      leakyFactory = createDurableAgents({
        name: 'kode.leaky-factory',
        store,
        agentFactory: () => Promise.reject(leakingError('factory')),
      })
      // An agent built on a store the host closed: the task fails with the store's SessionError.
      closedStore = createDurableAgents({
        name: 'kode.closed-store',
        store,
        agentFactory: () => {
          throw new SessionError('store_closed', 'the session store is closed', { sessionId: 'closed-store' })
        },
      })
      // An agent whose close fails (a host's wrapper around it, say).
      badClose = createDurableAgents({
        name: 'kode.bad-close',
        store,
        agentFactory: async ({ sessionId, store }) => {
          const agent = await createAgent({ client, store, sessionId })
          return new Proxy(agent, {
            get: (target, key) =>
              key === 'close' ? () => Promise.reject(new Error('close failed')) : Reflect.get(target, key),
          })
        },
      })
      strays = createDurableAgents({
        name: 'kode.stray',
        store,
        agentFactory: ({ store }) => createAgent({ client, store, sessionId: 'somewhere-else' }),
      })
    },
  })
  await DBOS.registerQueue('kode-test-queue', { concurrency: 4 })
}, 60_000)

afterAll(async () => {
  await DBOS.shutdown()
  await tightStore.close()
  await store.close()
  await server.close()
  await dropSchema(schema)
  await dropSchema(dbosSchema)
})

/** The history as `role: text` / record-type lines. */
async function lines(sessionId: string): Promise<string[]> {
  return (await store.read(sessionId)).map((record) => {
    if (!('role' in record)) return record.type
    if (record.role === 'tool') return `tool ${record.toolCallId} ${record.status}: ${record.outputText}`
    const parts = record.parts.map((part) =>
      part.type === 'text'
        ? part.text
        : part.type === 'tool_call'
          ? `call ${part.id} ${part.name}`
          : part.type,
    )
    return `${record.role}: ${parts.join(' | ')}`
  })
}

describe('durable tasks on DBOS', () => {
  test('a task runs as a workflow whose steps are only its start and its end: the history is the checkpoint', async () => {
    server.enqueue(reply('r1', 'Hello there.'))
    const { workflowId, sessionId } = await durable.start('greet', 'Say hello')
    expect(sessionId).toBe('greet')
    const outcome = await durable.result(workflowId, FAST)
    expect(outcome).toMatchObject({ sessionId: 'greet', reason: 'completed', text: 'Hello there.' })
    expect(await lines('greet')).toEqual(['user: Say hello', 'assistant: Hello there.', 'task_metadata'])
    // Created by the workflow, the session still names the model, as the agent would have.
    expect(await store.info('greet')).toMatchObject({
      model: 'gpt-4o',
      provider: 'openai-chat',
      recordCount: 3,
    })
    const status = await durable.status(workflowId)
    expect(status).toMatchObject({
      workflowId,
      sessionId: 'greet',
      status: 'SUCCESS',
      executorId: 'in-process',
      outcome: { reason: 'completed', text: 'Hello there.' },
    })
    // No model call and no tool call journaled as a DBOS step: they live in the history only.
    const steps = await DBOS.listWorkflowSteps(workflowId)
    // The second step only lasts while the task runs, to interrupt it on DBOS.cancelWorkflow.
    expect(steps?.map((step) => step.name)).toEqual(['kode.task.begin', 'kode.task.watch'])
  })

  test('starting again with the same workflow id starts nothing new', async () => {
    server.enqueue(reply('r2', 'Once.'))
    const first = await durable.start('once', 'Answer once', { workflowId: 'task-once' })
    await durable.result(first.workflowId, FAST)
    const requests = server.requests.length
    const again = await durable.start('once', 'Answer once', { workflowId: 'task-once' })
    expect(again.workflowId).toBe('task-once')
    expect((await durable.result('task-once', FAST)).text).toBe('Once.')
    expect(server.requests.length).toBe(requests)
    expect(await lines('once')).toEqual(['user: Answer once', 'assistant: Once.', 'task_metadata'])
  })

  test('a workflow id that names a task of another session is refused typed, never handed out as this one', async () => {
    server.enqueue(reply('r2b', 'Mine.'))
    const mine = await durable.start('id-owner', 'Answer me', { workflowId: 'task-taken' })
    await durable.result(mine.workflowId, FAST)
    const requests = server.requests.length
    for (const begin of [
      () => durable.start('id-thief', 'Answer me', { workflowId: 'task-taken' }),
      () => durable.continue('id-thief', { workflowId: 'task-taken' }),
    ]) {
      const error = await begin().catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && [error.code, error.message]).toEqual([
        'invalid_options',
        'workflow task-taken is a task of session id-owner, not one of session id-thief: give each task its own workflowId',
      ])
    }
    // The same task on its own session, asked for again, is still that task.
    expect(await durable.start('id-owner', 'Answer me', { workflowId: 'task-taken' })).toEqual(mine)
    expect(await store.info('id-thief')).toBeUndefined()
    expect(server.requests.length).toBe(requests)
  })

  test('a workflow id that names a task of other durable agents is refused typed', async () => {
    server.enqueue(reply('r2d', 'Ours.'))
    const ours = await durable.start('id-of-kode-task', 'Answer', { workflowId: 'task-of-kode.task' })
    await durable.result(ours.workflowId, FAST)
    for (const begin of [
      () => strays.start('id-of-kode-task', 'Answer', { workflowId: 'task-of-kode.task' }),
      () => strays.continue('id-of-kode-task', { workflowId: 'task-of-kode.task' }),
    ]) {
      const error = await begin().catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && [error.code, error.message]).toEqual([
        'invalid_options',
        'workflow task-of-kode.task is not a task of kode.stray: give each task its own workflowId',
      ])
      // DBOS's own error says what it found.
      expect((error as Error).cause).toBeInstanceOf(DBOSErrors.DBOSConflictingWorkflowError)
    }
  })

  test("an agent whose close fails still gives the session's writer back", async () => {
    server.enqueue(reply('r2c', 'Closed badly.'))
    const { workflowId } = await badClose.start('bad-close', 'Hello')
    await badClose.result(workflowId, FAST).catch(() => undefined)
    // The workflow ended: its lease is released, or the session would stay locked for ever.
    const lease = await store.acquire('bad-close')
    await lease.release()
    expect(await lines('bad-close')).toEqual(['user: Hello', 'assistant: Closed badly.', 'task_metadata'])
  })

  test('a task paused for approval is continued as another durable task with the decisions', async () => {
    server.enqueue(callTools('r3', [{ id: 'c1', name: 'write_note', args: { text: 'milk' } }]))
    server.enqueue(reply('r4', 'Noted milk.'))
    const paused = await durable.start('notes', 'Note milk')
    expect(await durable.result(paused.workflowId, FAST)).toMatchObject({
      reason: 'awaiting_approval',
      pendingApprovals: [{ toolCallId: 'c1', toolName: 'write_note', arguments: '{"text":"milk"}' }],
    })
    const continued = await durable.continue('notes', { approvals: [{ toolCallId: 'c1', approved: true }] })
    expect(await durable.result(continued.workflowId, FAST)).toMatchObject({
      reason: 'completed',
      text: 'Noted milk.',
    })
    expect(written).toEqual(['milk'])
    expect(await lines('notes')).toEqual([
      'user: Note milk',
      'assistant: call c1 write_note',
      'approval_request',
      'task_metadata',
      'approval_decision',
      'tool c1 success: noted',
      'assistant: Noted milk.',
      'task_metadata',
    ])
  })

  test('decisions for a session deleted while its calls awaited them fail typed, and leave no session behind', async () => {
    server.enqueue(callTools('r5', [{ id: 'c2', name: 'write_note', args: { text: 'eggs' } }]))
    const paused = await durable.start('notes-deleted', 'Note eggs')
    expect(await durable.result(paused.workflowId, FAST)).toMatchObject({ reason: 'awaiting_approval' })
    // The user deletes the conversation; a decision from a page still showing it comes after.
    await store.delete('notes-deleted')
    const requests = server.requests.length
    const continued = await durable.continue('notes-deleted', {
      approvals: [{ toolCallId: 'c2', approved: true }],
    })
    const error = await durable.result(continued.workflowId, FAST).catch((error: unknown) => error)
    expect(DurableTaskError.is(error)).toBe(true)
    expect(error).toMatchObject({ code: 'session_deleted' })
    expect(await store.info('notes-deleted')).toBeUndefined()
    expect(server.requests.length).toBe(requests)
    expect(written).not.toContain('eggs')
  })

  test('DBOS.cancelWorkflow interrupts the running task: its call is aborted, the lease released, the workflow CANCELLED', async () => {
    server.enqueue(callTools('r6', [{ id: 'w1', name: 'wait_for_cancel', args: {} }]))
    const started = new Promise<void>((resolve) => {
      waitStarted = resolve
    })
    const { workflowId } = await durable.start('cancel-me', 'Wait for it')
    await started
    const signal = waiting.at(-1)!
    await DBOS.cancelWorkflow(workflowId)
    // DBOS polls for cancellations about once a second: far within this deadline.
    await within(20_000, 'the running tool call to be aborted', () => signal.aborted)
    // The session's writer comes back: a lease left held would be renewed for ever.
    const lease = await eventually(20_000, 'the session lease to be released', () =>
      store.acquire('cancel-me'),
    )
    await lease.release()
    expect(await lines('cancel-me')).toEqual([
      'user: Wait for it',
      'assistant: call w1 wait_for_cancel',
      expect.stringMatching(/^tool w1 aborted: /),
      'task_metadata',
    ])
    expect((await durable.status(workflowId))?.status).toBe('CANCELLED')
    const error = await durable.result(workflowId, FAST).catch((e: unknown) => e)
    expect(DurableTaskError.is(error) && [error.code, error.message]).toEqual([
      'task_cancelled',
      `task ${workflowId} was cancelled`,
    ])
  })

  test('a task cancelled before its run began (while its agent is built) never starts it', async () => {
    factoryEntered = new Promise<void>((resolve) => {
      enterFactory = resolve
    })
    const requests = server.requests.length
    const { workflowId } = await gated.start('cancel-early', 'Never asked')
    await factoryEntered
    await DBOS.cancelWorkflow(workflowId)
    openGate()
    const error = await gated.result(workflowId, FAST).catch((e: unknown) => e)
    expect(DurableTaskError.is(error) && error.code).toBe('task_cancelled')
    // The workflow gives the session back once it stopped.
    const lease = await eventually(20_000, 'the session lease to be released', () =>
      store.acquire('cancel-early'),
    )
    await lease.release()
    expect(await lines('cancel-early')).toEqual([])
    expect(server.requests.length).toBe(requests)
  })

  test("the engine's and the store's refusals inside a task reach the host typed, with their code", async () => {
    server.enqueue(callTools('t1', [{ id: 'c9', name: 'write_note', args: { text: 'tea' } }]))
    const paused = await durable.start('notes-typo', 'Note tea')
    expect(await durable.result(paused.workflowId, FAST)).toMatchObject({ reason: 'awaiting_approval' })
    // A decision on a call that awaits none: agent.continue refuses it with AgentError.
    const continued = await durable.continue('notes-typo', {
      approvals: [{ toolCallId: 'c8', approved: true }],
    })
    const refused = await durable.result(continued.workflowId, FAST).catch((e: unknown) => e)
    expect(AgentError.is(refused) && [refused.code, refused.message]).toEqual([
      'unknown_approval',
      'tool call c8 awaits no approval',
    ])
    const status = await durable.status(continued.workflowId)
    expect(AgentError.is(status?.error) && status.error.code).toBe('unknown_approval')
    expect(written).not.toContain('tea')

    const { workflowId } = await closedStore.start('closed-store', 'Hello')
    const closed = await closedStore.result(workflowId, FAST).catch((e: unknown) => e)
    expect(SessionError.is(closed) && [closed.code, closed.sessionId, closed.message]).toEqual([
      'store_closed',
      'closed-store',
      'the session store is closed',
    ])
  })

  test('an agent bound to another session fails the task with wrong_session, writing nothing', async () => {
    const { workflowId } = await strays.start('stray', 'Hello')
    const error = await strays.result(workflowId, FAST).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(Error)
    expect((error as Error).message).toBe(
      'agentFactory returned an agent of session somewhere-else for a task of session stray',
    )
    // Recorded by DBOS and read back, it is still a DurableTaskError a host can test for.
    expect(DurableTaskError.is(error) && error.code).toBe('wrong_session')
    const status = await strays.status(workflowId)
    expect(status?.status).toBe('ERROR')
    expect(DurableTaskError.is(status?.error) && status.error.code).toBe('wrong_session')
    expect(await store.read('stray')).toEqual([])
  })

  test('status and result know only their own tasks', async () => {
    expect(await durable.status('no-such-task')).toBeUndefined()
    server.enqueue(reply('r5', 'Hi.'))
    const { workflowId } = await durable.start('greet-2', 'Hi')
    await durable.result(workflowId, FAST)
    expect(await strays.status(workflowId)).toBeUndefined()
    const error = await strays.result(workflowId, FAST).catch((e: unknown) => e)
    expect(DurableTaskError.is(error) && error.code).toBe('unknown_task')
  })

  test('an input that cannot run is refused typed before anything is recorded: no workflow, no session', async () => {
    const requests = server.requests.length
    const inputs = [
      // Not a user part: the session would refuse it, after the workflow had created the session.
      [{ type: 'text' }],
      // Not JSON: DBOS could not record it.
      [{ type: 'text', text: 1n }],
      42,
    ] as unknown as UserInput[]
    for (const [index, input] of inputs.entries()) {
      const workflowId = `bad-input-${index}`
      const error = await durable.start(`bad-input-${index}`, input, { workflowId }).catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && error.code).toBe('invalid_input')
      expect((error as Error).message).toMatch(/^the task's input is not valid user input: /)
      expect(await durable.status(workflowId)).toBeUndefined()
      expect(await store.info(`bad-input-${index}`)).toBeUndefined()
    }
    const bad = await durable
      .continue('notes', {
        approvals: [{ toolCallId: 'c1', approved: 'yes' }] as never,
        workflowId: 'bad-approvals',
      })
      .catch((e: unknown) => e)
    expect(DurableTaskError.is(bad) && [bad.code, bad.message]).toEqual([
      'invalid_input',
      'approvals[0] must be { toolCallId: string, approved: boolean, reason?: string, sessionId?: string }',
    ])
    expect(await durable.status('bad-approvals')).toBeUndefined()
    expect(server.requests.length).toBe(requests)
  })

  test("a reaper whose clock runs an hour ahead of the database's does not take a task that has just started", async () => {
    server.enqueue(reply('k1', 'Started once.'))
    const requests = server.requests.length
    const { workflowId } = await slowStart.start('just-started', 'Start once')
    // PENDING, and its session not created yet (no writer to find): only its age protects it.
    expect((await slowStart.status(workflowId))?.status).toBe('PENDING')
    expect(await store.info('just-started')).toBeUndefined()
    // Another worker's reaper (this task is not its own), whose clock is an hour ahead.
    const reaper = {
      store,
      workflowName: 'kode.slow-start',
      local: new Set<string>(),
      staleAfterMs: 2_000,
      now: () => Date.now() + 3_600_000,
      seen: new Map(),
    }
    expect(await reapOnce(reaper)).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await reapOnce(reaper)).toEqual([])
    openCreate()
    expect(await slowStart.result(workflowId, FAST)).toMatchObject({ text: 'Started once.' })
    expect(server.requests.length).toBe(requests + 1)
    expect(await lines('just-started')).toEqual([
      'user: Start once',
      'assistant: Started once.',
      'task_metadata',
    ])
  })

  test('a task cancelled while a reaper sweeps is not resumed by it: it stays cancelled', async () => {
    const requests = server.requests.length
    const { workflowId } = await stuck.start('cancelled-while-reaped', 'Never run')
    expect((await stuck.status(workflowId))?.status).toBe('PENDING')
    // Another worker's reaper; the host cancels the task just as the reaper looks for its writer.
    const reaper = {
      store: {
        ...store,
        acquire: async (id: string) => {
          await DBOS.cancelWorkflow(workflowId)
          return store.acquire(id)
        },
      },
      workflowName: 'kode.stuck',
      local: new Set<string>(),
      staleAfterMs: 1,
      now: () => performance.now(),
      seen: new Map(),
    }
    expect(await reapOnce(reaper)).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await reapOnce(reaper)).toEqual([])
    expect((await stuck.status(workflowId))?.status).toBe('CANCELLED')
    openStuck()
    const error = await stuck.result(workflowId, FAST).catch((e: unknown) => e)
    expect(DurableTaskError.is(error) && error.code).toBe('task_cancelled')
    expect((await stuck.status(workflowId))?.status).toBe('CANCELLED')
    expect(server.requests.length).toBe(requests)
  })

  test('an error a task records or returns never carries an API key, in DBOS or to the host', async () => {
    for (const [tasks, sessionId] of [
      [leakyRun, 'leaky-run'],
      [leakyFactory, 'leaky-factory'],
      // A hook that throws fails the run with its error, after the task ended in the history.
      [leakyHook, 'leaky-hook'],
    ] as const) {
      const { workflowId } = await tasks.start(sessionId, 'Hello')
      const error = await tasks.result(workflowId, FAST).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(Error)
      // What the host gets still says what failed.
      expect((error as Error).message).toMatch(
        /(failed: POST with|refused) Authorization: Bearer \[redacted\]/,
      )
      expect(everything(error)).not.toContain(API_KEY)
      expect(everything((await tasks.status(workflowId))?.error)).not.toContain(API_KEY)
      // What DBOS keeps in Postgres: the workflow's error and its steps' outputs.
      const rows = await dbosRows(workflowId)
      expect(rows).toContain('Authorization: Bearer [redacted]')
      expect(rows).not.toContain(API_KEY)
    }
  })

  test('an odd value a hook throws fails the task with a plain error, never a credential or a TypeError of its own', async () => {
    const revoked = Proxy.revocable(new Error('revoked'), {})
    revoked.revoke()
    const cases: [unknown, { name: string; message: string }][] = [
      // The name is text DBOS keeps and logs, as the message is.
      [
        Object.assign(new Error('the gateway refused'), { name: `x-api-key: ${API_KEY}` }),
        { name: 'x-api-key: [redacted]', message: 'the gateway refused' },
      ],
      // A message that is not text is left out, rather than failing the copy with a TypeError.
      [Object.assign(new Error('set below'), { message: 42 }), { name: 'Error', message: '' }],
      [revoked.proxy, { name: 'Error', message: 'a thrown object' }],
      [null, { name: 'Error', message: 'a thrown object' }],
    ]
    for (const [index, [thrown, expected]] of cases.entries()) {
      oddThrown = thrown
      const { workflowId } = await oddHook.start(`odd-hook-${index}`, 'Hello')
      const error = await oddHook.result(workflowId, FAST).catch((e: unknown) => e)
      expect(error instanceof Error && { name: error.name, message: error.message }).toEqual(expected)
      expect(everything(error)).not.toContain(API_KEY)
      expect(await dbosRows(workflowId)).not.toContain(API_KEY)
    }
  })

  test("a task started on the host's queue is resumed by the reaper on that queue, under its limits", async () => {
    const { workflowId } = await stuckQueued.start('reaped-on-queue', 'Queued')
    await expect
      .poll(async () => (await stuckQueued.status(workflowId))?.status, { timeout: 10_000 })
      .toBe('PENDING')
    const reaper = {
      store,
      workflowName: 'kode.stuck-queued',
      local: new Set<string>(),
      staleAfterMs: 1,
      now: () => performance.now(),
      seen: new Map(),
      queueName: 'kode-test-queue',
    }
    expect(await reapOnce(reaper)).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(await reapOnce(reaper)).toEqual([workflowId])
    expect((await DBOS.getWorkflowStatus(workflowId))?.queueName).toBe('kode-test-queue')
    await DBOS.cancelWorkflow(workflowId)
    openQueuedGate()
  })

  test('the reaper resumes only the first of the tasks waiting to begin on a session: the others wait their turn', async () => {
    // Two tasks of one session, neither begun: the second waits for the first, wherever it runs.
    // Resumed too, it would run twice, and its first execution would fail once it began.
    const first = await stuckTurns.start('turns', 'First')
    const second = await stuckTurns.start('turns', 'Second')
    // A task another service enqueued, without the attribute that names its session: the reaper
    // finds its session in its argument.
    const client = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    const elsewhere = await client
      .enqueue(
        { workflowName: 'kode.stuck-turns', queueName: 'kode-test-queue', appVersion: 'kode-test-1' },
        { kind: 'run', sessionId: 'turns-elsewhere', input: 'Third' },
      )
      .finally(() => client.destroy())
    await expect
      .poll(async () => (await DBOS.getWorkflowStatus(elsewhere.workflowID))?.status, { timeout: 10_000 })
      .toBe('PENDING')
    const reaper = {
      store,
      workflowName: 'kode.stuck-turns',
      local: new Set<string>(),
      staleAfterMs: 1,
      now: () => performance.now(),
      seen: new Map(),
    }
    // A sweep lists the pending tasks without their inputs (up to megabytes each), on every worker.
    const listings = vi.spyOn(DBOS, 'listWorkflows')
    try {
      expect(await reapOnce(reaper)).toEqual([])
      await new Promise((resolve) => setTimeout(resolve, 20))
      expect((await reapOnce(reaper)).sort()).toEqual([first.workflowId, elsewhere.workflowID].sort())
      const sweeps = listings.mock.calls.filter(([input]) => input.status === 'PENDING')
      expect(sweeps.map(([input]) => input.loadInput)).toEqual([false, false])
    } finally {
      listings.mockRestore()
    }
    for (const workflowId of [first.workflowId, second.workflowId, elsewhere.workflowID])
      await DBOS.cancelWorkflow(workflowId)
    openStuckTurns()
  })

  test('a workflow id Postgres cannot keep as it is (a NUL, a lone surrogate) is refused typed, starting nothing', async () => {
    const requests = server.requests.length
    // Postgres refuses a NUL in text, and pg sends a lone surrogate as U+FFFD: an execution after a
    // crash would read back another id, and not find the input persisted under the first.
    for (const workflowId of ['wf-\u0000-nul', 'wf-\ud800-lone', '']) {
      for (const begin of [
        () => durable.start('odd-workflow-id', 'Hello', { workflowId }),
        () => durable.continue('odd-workflow-id', { workflowId }),
      ]) {
        const error = await begin().catch((e: unknown) => e)
        expect(DurableTaskError.is(error) && [error.code, error.message]).toEqual([
          'invalid_options',
          'workflowId must be a non-empty string without NUL characters or lone surrogates',
        ])
      }
    }
    expect(await store.info('odd-workflow-id')).toBeUndefined()
    expect(server.requests.length).toBe(requests)
  })

  test('an id no task can have, options that are not an object and a factory that builds no agent are refused typed', async () => {
    // Postgres refuses a NUL: asking about such an id must not fail with its DatabaseError.
    for (const workflowId of ['wf-\u0000-nul', 'wf-\ud800-lone', '']) {
      expect(await durable.status(workflowId)).toBeUndefined()
      const error = await durable.result(workflowId).catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && error.code).toBe('unknown_task')
    }
    for (const call of [
      () => durable.start('null-options', 'Hello', null as never),
      () => durable.continue('null-options', null as never),
    ]) {
      const error = await call().catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && error.code).toBe('invalid_options')
    }
    expect(await store.info('null-options')).toBeUndefined()
    server.enqueue(reply('r-null-options', 'Hi.'))
    const { workflowId } = await durable.start('null-options', 'Hello', { workflowId: 'null-options-result' })
    const refused = await durable.result(workflowId, null as never).catch((e: unknown) => e)
    expect(DurableTaskError.is(refused) && [refused.code, refused.message]).toEqual([
      'invalid_options',
      'the options of result must be an object',
    ])
    const built = await noAgent.start('no-agent', 'Hello')
    const error = await noAgent.result(built.workflowId, FAST).catch((e: unknown) => e)
    expect(DurableTaskError.is(error) && [error.code, error.message]).toEqual([
      'invalid_options',
      'agentFactory returned a value of type undefined, not an agent',
    ])
    expect(await lines('no-agent')).toEqual([])
  })

  test('a task asks for structured output by name: its answer is checked, corrected once, and result() gives the value', async () => {
    // The first answer misses a field: the engine's corrective turn asks again.
    server.enqueue(reply('o1', '{"city":"Oslo"}'))
    server.enqueue(reply('o2', '{"city":"Oslo","celsius":-3}'))
    const requests = server.requests.length
    const { workflowId } = await durable.start('weather', 'Weather in Oslo?', { output: 'weather' })
    const outcome = await durable.result(workflowId, FAST)
    expect(outcome).toMatchObject({ reason: 'completed', output: { city: 'Oslo', celsius: -3 } })
    expect((await durable.status(workflowId))?.outcome?.output).toEqual({ city: 'Oslo', celsius: -3 })
    // Both model calls asked for the schema, as agent.run(input, { output }) does.
    const sent = server.requests
      .slice(requests)
      .map((request) => (request.body as Record<string, unknown>).response_format)
    // Once, under load, a request without the schema came first: the messages say whose it was.
    const asked = server.requests
      .slice(requests)
      .map((request) => (request.body as { messages?: unknown }).messages)
    expect(sent, JSON.stringify(asked)).toEqual([
      expect.objectContaining({
        type: 'json_schema',
        json_schema: expect.objectContaining({ name: 'Weather' }),
      }),
      expect.objectContaining({ type: 'json_schema' }),
    ])
    // DBOS records the schema's name, never the schema (its JSON would lose what TypeBox checks with).
    const recorded = (await DBOS.getWorkflowStatus(workflowId))?.input?.[0]
    expect(recorded).toEqual({
      kind: 'run',
      sessionId: 'weather',
      input: 'Weather in Oslo?',
      output: 'weather',
    })
  })

  test('a structured task paused for approval is continued with its output, and gives the value', async () => {
    server.enqueue(callTools('o3', [{ id: 'c-out', name: 'write_note', args: { text: 'rain' } }]))
    server.enqueue(reply('o4', '{"city":"Bergen","celsius":8}'))
    const paused = await durable.start('weather-note', 'Note the weather in Bergen', { output: 'weather' })
    expect(await durable.result(paused.workflowId, FAST)).toMatchObject({ reason: 'awaiting_approval' })
    const continued = await durable.continue('weather-note', {
      approvals: [{ toolCallId: 'c-out', approved: true }],
      output: 'weather',
    })
    expect(await durable.result(continued.workflowId, FAST)).toMatchObject({
      reason: 'completed',
      output: { city: 'Bergen', celsius: 8 },
    })
  })

  test('an output no schema of outputs has is refused typed before anything is recorded', async () => {
    const requests = server.requests.length
    for (const [index, call] of [
      () => durable.start('no-such-output', 'Hello', { output: 'forecast', workflowId: 'no-output-0' }),
      () => durable.continue('no-such-output', { output: 'forecast', workflowId: 'no-output-1' }),
      () => durable.start('no-such-output', 'Hello', { output: 'toString', workflowId: 'no-output-2' }),
    ].entries()) {
      const error = await call().catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && error.code).toBe('invalid_options')
      expect(await durable.status(`no-output-${index}`)).toBeUndefined()
    }
    expect(await store.info('no-such-output')).toBeUndefined()
    expect(server.requests.length).toBe(requests)
    const notAnObject = (() => {
      try {
        createDurableAgents({
          name: 'kode.bad-outputs',
          store,
          agentFactory: () => never(),
          outputs: { list: Type.Array(Type.String()) },
        })
      } catch (error) {
        return error
      }
    })()
    expect(DurableTaskError.is(notAnObject) && [notAnObject.code, notAnObject.message]).toEqual([
      'invalid_options',
      "outputs.list must describe an object (Type.Object), as agent.run's output does",
    ])
  })

  test("an input larger than the store's maxRecordBytes is refused typed before anything is recorded or created", async () => {
    const requests = server.requests.length
    for (const [index, input] of [
      'x'.repeat(5_000),
      [{ type: 'text' as const, text: 'é'.repeat(1_500) }],
    ].entries()) {
      const workflowId = `too-big-${index}`
      const error = await tight.start(`too-big-${index}`, input, { workflowId }).catch((e: unknown) => e)
      expect(DurableTaskError.is(error) && error.code).toBe('invalid_input')
      expect((error as Error).message).toMatch(
        /^the task's input is \d+ bytes as a history record, over the store's limit of 2000 bytes \(maxRecordBytes\)/,
      )
      expect(await tight.status(workflowId)).toBeUndefined()
      expect(await tightStore.info(`too-big-${index}`)).toBeUndefined()
    }
    expect(server.requests.length).toBe(requests)
    // One that fits runs as usual.
    server.enqueue(reply('t1', 'Read it.'))
    const fits = await tight.start('fits', 'x'.repeat(1_000))
    expect(await tight.result(fits.workflowId, FAST)).toMatchObject({ reason: 'completed', text: 'Read it.' })
  })

  test('a session id no store can keep is refused typed, the SessionError as its cause, before anything is recorded', async () => {
    const requests = server.requests.length
    for (const [index, sessionId] of ['../etc', '', 'con', 'a'.repeat(129)].entries()) {
      for (const [kind, call] of [
        ['start', () => durable.start(sessionId, 'Hello', { workflowId: `bad-session-${index}-start` })],
        ['continue', () => durable.continue(sessionId, { workflowId: `bad-session-${index}-continue` })],
      ] as const) {
        const error = await call().catch((e: unknown) => e)
        expect(DurableTaskError.is(error) && error.code).toBe('invalid_options')
        expect((error as Error).message).toMatch(/^invalid session id /)
        const cause = (error as Error).cause
        expect(SessionError.is(cause) && cause.code).toBe('invalid_session_id')
        expect(await durable.status(`bad-session-${index}-${kind}`)).toBeUndefined()
      }
    }
    expect(server.requests.length).toBe(requests)
  })

  test('a task another service enqueued with an argument that is not a Kode task fails typed, running nothing', async () => {
    // A session with a task paused for approval: a task that carried it on would call the model.
    server.enqueue(callTools('q1', [{ id: 'q-c1', name: 'write_note', args: { text: 'tea' } }]))
    const paused = await durable.start('enqueued-elsewhere', 'Note tea')
    expect(await durable.result(paused.workflowId, FAST)).toMatchObject({ reason: 'awaiting_approval' })
    const records = (await lines('enqueued-elsewhere')).length
    const requests = server.requests.length
    // DBOS lets any service enqueue a workflow by name, with whatever arguments it sends.
    const client = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      // As many as the queue runs at once (its concurrency is 4): one round of its polling.
      const cases: [unknown[], string][] = [
        // A kind this version does not know (a newer one's, or a typo) is never taken for a continue.
        [
          [
            {
              kind: 'resume',
              sessionId: 'enqueued-elsewhere',
              approvals: [{ toolCallId: 'q-c1', approved: true }],
            },
          ],
          'the task is not a Kode durable task: kind must be "run" or "continue"',
        ],
        [[], 'the task is not a Kode durable task: its argument is not an object'],
        [
          [{ kind: 'run', sessionId: 'enqueued-bad-input', input: 42 }],
          "the task's input is not valid user input",
        ],
        [
          [{ kind: 'run', sessionId: 'enqueued-bad-output', input: 'Hello', output: 7 }],
          'the task is not a Kode durable task: output must be the name of a schema',
        ],
      ]
      const handles = []
      for (const [args] of cases) {
        handles.push(
          await client.enqueue(
            { workflowName: 'kode.task', queueName: 'kode-test-queue', appVersion: 'kode-test-1' },
            ...args,
          ),
        )
      }
      const errors = await Promise.all(
        handles.map((handle) => durable.result(handle.workflowID, FAST).catch((e: unknown) => e)),
      )
      for (const [index, [, message]] of cases.entries()) {
        const error = errors[index]
        expect(DurableTaskError.is(error) && error.code).toBe('invalid_input')
        expect((error as Error).message).toContain(message)
      }
    } finally {
      await client.destroy()
    }
    expect(server.requests.length).toBe(requests)
    expect((await lines('enqueued-elsewhere')).length).toBe(records)
    expect(await store.info('enqueued-bad-input')).toBeUndefined()
    expect(await store.info('enqueued-bad-output')).toBeUndefined()
  })

  test('the tasks of one session run in the order they were started, whichever finds it free first', async () => {
    server.enqueue(reply('io1', 'Answered.'))
    server.enqueue(reply('io2', 'Answered.'))
    const first = await inOrder.start('in-order', 'First message')
    const second = await inOrder.start('in-order', 'Second message')
    let secondEnded = false
    const secondDone = inOrder.result(second.workflowId, FAST).finally(() => {
      secondEnded = true
    })
    // The second task found the session free while the first was still beginning: it gives the
    // writer back and waits its turn, rather than running first.
    await within(10_000, 'the second task to wait or end', () => secondEnded || inOrderReleases >= 1)
    openInOrder()
    await inOrder.result(first.workflowId, FAST)
    await secondDone
    expect((await lines('in-order')).filter((line) => line.startsWith('user: '))).toEqual([
      'user: First message',
      'user: Second message',
    ])
  })

  test('a task DBOS stopped running after too many recoveries rejects result() typed, with DBOS error as cause', async () => {
    server.enqueue(reply('dl1', 'Done.'))
    const { workflowId } = await durable.start('dead-lettered', 'Hello')
    await durable.result(workflowId, FAST)
    // What DBOS writes once a task's executions died with their workers more often than it allows
    // (100 by default): written here directly, rather than by crashing 100 workers.
    const client = new pg.Client({ connectionString: postgresUrl() })
    await client.connect()
    try {
      await client.query(
        `update "${dbosSchema}".workflow_status set status = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' where workflow_uuid = $1`,
        [workflowId],
      )
    } finally {
      await client.end()
    }
    const error = await durable.result(workflowId, FAST).catch((e: unknown) => e)
    expect(DurableTaskError.is(error) && [error.code, error.message]).toEqual([
      'recovery_attempts_exceeded',
      `task ${workflowId} was started or recovered more times than DBOS allows, each execution ending with its worker; DBOS will not run it again (DBOS.resumeWorkflow runs it once more)`,
    ])
    expect((error as Error).cause).toBeInstanceOf(Error)
    expect((await durable.status(workflowId))?.status).toBe('MAX_RECOVERY_ATTEMPTS_EXCEEDED')
  })

  test('a store failure under the run (a connection cut) is carried on from the history after a wait', async () => {
    server.enqueue(callTools('fl1', [{ id: 'c1', name: 'tally', args: {} }]))
    server.enqueue(reply('fl2', 'Counted.'))
    server.enqueue(reply('fl3', 'Counted, again.'))
    let failures = 0
    // The final answer's append fails once: the connection was cut under it.
    failAppend = (events) => hasText(events, 'Counted.') && failures++ === 0
    const tallies = tallied
    try {
      const { workflowId } = await flaky.start('flaky-cut', 'Count')
      const outcome = await flaky.result(workflowId, FAST)
      expect(outcome).toMatchObject({ reason: 'completed', text: 'Counted, again.' })
      expect(failures).toBe(1)
      expect(tallied).toBe(tallies + 1)
      // The answer that was never written is asked for again; the tool's result is not redone.
      expect(await lines('flaky-cut')).toEqual([
        'user: Count',
        'assistant: call c1 tally',
        `tool c1 success: tallied ${tallies + 1}`,
        'assistant: Counted, again.',
        'task_metadata',
      ])
      expect((await flaky.status(workflowId))?.status).toBe('SUCCESS')
    } finally {
      failAppend = () => false
    }
  })

  test('a lease lost to another writer while the database was out of reach is taken again, and the task carried on', async () => {
    server.enqueue(callTools('ll1', [{ id: 'c1', name: 'steal_lease', args: {} }]))
    server.enqueue(reply('ll2', 'Carried on.'))
    const { workflowId } = await flaky.start('flaky-lease', 'Take it')
    const outcome = await flaky.result(workflowId, FAST)
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Carried on.' })
    // The call's result could not be written under the lost lease: settled as after a crash.
    const history = await lines('flaky-lease')
    expect(history.slice(0, 2)).toEqual(['user: Take it', 'assistant: call c1 steal_lease'])
    expect(history[2]).toMatch(/^tool c1 error: /)
    expect(history.slice(3)).toEqual(['assistant: Carried on.', 'task_metadata'])
  })

  test('a store that keeps failing fails the task after storeRetry.maxAttempts runs, with its error', async () => {
    const requests = server.requests.length
    for (let i = 0; i < 6; i++) server.enqueue(reply(`kf${i}`, 'Never kept.'))
    failAppend = (events) => hasText(events, 'Never kept.')
    try {
      const { workflowId } = await flaky.start('flaky-down', 'Hello')
      const error = await flaky.result(workflowId, FAST).catch((e: unknown) => e)
      expect((error as Error).message).toBe('Connection terminated unexpectedly')
      // Six runs in all (the default), each asking for the answer it could not keep.
      expect(server.requests.length - requests).toBe(6)
      expect(await lines('flaky-down')).toEqual(['user: Hello'])
    } finally {
      failAppend = () => false
    }
  })

  test('options that cannot work are refused up front', () => {
    const bad = (() => {
      try {
        createDurableAgents({ store, agentFactory: () => never(), lockRetryMs: 0 })
      } catch (error) {
        return error
      }
    })()
    expect(DurableTaskError.is(bad) && [bad.code, bad.message]).toEqual([
      'invalid_options',
      'lockRetryMs must be a positive number of milliseconds',
    ])
    const refused = (storeRetry: unknown) => {
      try {
        createDurableAgents({ store, agentFactory: () => never(), storeRetry: storeRetry as never })
      } catch (error) {
        return DurableTaskError.is(error) && [error.code, error.message]
      }
    }
    expect(refused({ maxAttempts: 0 })).toEqual([
      'invalid_options',
      'storeRetry.maxAttempts must be a whole number, 1 or more',
    ])
    expect(refused({ baseDelayMs: -1 })).toEqual([
      'invalid_options',
      'storeRetry.baseDelayMs must be a number of milliseconds, 0 or more',
    ])
    expect(refused('often')).toEqual(['invalid_options', 'storeRetry must be an object'])
  })
})

/** Whether `events` hold a message with exactly this text. */
function hasText(events: readonly HistoryEvent[], text: string): boolean {
  return events.some(
    (event) => 'parts' in event && event.parts.some((part) => part.type === 'text' && part.text === text),
  )
}

/** Every string an error holds: its message, stack, fields and causes, as JSON would show them. */
function everything(error: unknown): string {
  const seen = new Set<unknown>()
  const walk = (value: unknown): unknown => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return value
    seen.add(value)
    const out: Record<string, unknown> = {}
    for (const key of Object.getOwnPropertyNames(value))
      out[key] = walk((value as Record<string, unknown>)[key])
    return out
  }
  return JSON.stringify(walk(error))
}

/** Every row DBOS keeps for a workflow (its status, output, steps...: each table that names it), as text. */
async function dbosRows(workflowId: string): Promise<string> {
  const client = new pg.Client({ connectionString: postgresUrl() })
  await client.connect()
  try {
    const tables = await client.query(
      `select table_name from information_schema.columns where table_schema = $1 and column_name = 'workflow_uuid'`,
      [dbosSchema],
    )
    const rows: unknown[] = []
    for (const { table_name } of tables.rows as { table_name: string }[]) {
      const found = await client.query(
        `select * from "${dbosSchema}"."${table_name}" where workflow_uuid = $1`,
        [workflowId],
      )
      rows.push(...found.rows)
    }
    return JSON.stringify(rows)
  } finally {
    await client.end()
  }
}

/** Polls until `check` holds; fails saying what never happened. */
async function within(ms: number, what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + ms
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Retries `attempt` until it resolves; fails with its last error after `ms`. */
async function eventually<T>(ms: number, what: string, attempt: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`, { cause: error })
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
}

function never(): never {
  throw new Error('not called')
}
