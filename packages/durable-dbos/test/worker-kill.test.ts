import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createInterface } from 'node:readline'
import { DBOSClient } from '@dbos-inc/dbos-sdk'
import { COMPACTION_PROMPT, createAgent, defineTool } from '@kode/core'
import { type HistoryEvent, toolCallsOf } from '@kode/protocol'
import { createClient } from '@kode/providers'
import { createSseTestServer, type SseTestServer } from '@kode/providers/testing'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { Type } from '@sinclair/typebox'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { bundleForNode } from '../../../test/children/bundle-for-node.js'
import { callTools, reply } from '../../../test/model/replies.js'
import { dbosDatabaseUrl, dropSchema, freshDbosSchema, freshSchema, postgresUrl } from './helpers/dbos.js'

// Real worker processes on one Postgres: worker A runs a task and is killed with SIGKILL while two
// of its tool calls run; worker B's reaper finds the task (A's session lease expired) and carries
// it on from the history. No completed model call or tool runs again; the call of the idempotent
// tool (`onResume: 'rerun'`) runs again with the same call id, the other is answered.

const STOPPED =
  'The task stopped before this tool call finished (its process ended); it may or may not have run.'

let worker: string
let server: SseTestServer
let dir: string
const running: ChildProcess[] = []
const schema = freshSchema()
const dbosSchema = freshDbosSchema()

beforeAll(async () => {
  worker = await bundleForNode(resolve(import.meta.dirname, 'processes/worker.ts'), {
    external: ['pg', '@dbos-inc/dbos-sdk'],
    packageDir: resolve(import.meta.dirname, '..'),
  })
  server = await createSseTestServer()
  dir = mkdtempSync(join(tmpdir(), 'kode-durable-'))
}, 60_000)

afterAll(async () => {
  for (const proc of running.splice(0)) proc.kill('SIGKILL')
  await server.close()
  rmSync(resolve(worker, '..'), { recursive: true, force: true })
  rmSync(dir, { recursive: true, force: true })
  await dropSchema(schema)
  await dropSchema(dbosSchema)
})

interface Worker {
  process: ChildProcess
  /** What it printed on stderr so far (also passed on to this process's stderr). */
  stderr(): string
  /** The lines it printed so far. */
  lines(): readonly string[]
  /** Resolves with the first line (seen or coming) that starts with `prefix`. */
  line(prefix: string): Promise<string>
  exited: Promise<number | null>
}

/** Starts a worker; with `dieAt`, one that SIGKILLs itself when its agent emits that event type. */
function startWorker(
  who:
    | string
    | { executorId: string; dieAt?: string; smallWindow?: boolean; holdUntil?: string; output?: boolean },
  ...args: string[]
): Worker {
  const { executorId, dieAt, smallWindow, holdUntil, output } =
    typeof who === 'string' ? { executorId: who } : who
  const config = {
    ...(output ? { output } : {}),
    ...(dieAt !== undefined ? { dieAt } : {}),
    ...(holdUntil !== undefined ? { holdUntil } : {}),
    ...(smallWindow ? { smallWindow } : {}),
    postgresUrl: postgresUrl(),
    dbosUrl: dbosDatabaseUrl(),
    schema,
    dbosSchema,
    executorId,
    modelUrl: server.url,
    toolLog: join(dir, 'tools.log'),
  }
  const proc = spawn(process.execPath, [worker, JSON.stringify(config), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  running.push(proc)
  let stderr = ''
  proc.stderr!.on('data', (chunk: Buffer) => {
    stderr += String(chunk)
    process.stderr.write(chunk)
  })
  const lines: string[] = []
  const waiters: { prefix: string; resolve: (line: string) => void }[] = []
  createInterface({ input: proc.stdout! }).on('line', (line) => {
    lines.push(line)
    for (const waiter of waiters.filter((w) => line.startsWith(w.prefix))) {
      waiters.splice(waiters.indexOf(waiter), 1)
      waiter.resolve(line)
    }
  })
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)))
  return {
    process: proc,
    stderr: () => stderr,
    lines: () => lines,
    exited,
    line: (prefix) =>
      new Promise((resolve, reject) => {
        const seen = lines.find((line) => line.startsWith(prefix))
        if (seen !== undefined) return resolve(seen)
        waiters.push({ prefix, resolve })
        void exited.then(() =>
          reject(new Error(`worker exited without "${prefix}"; it printed ${lines.join(' | ')}`)),
        )
      }),
  }
}

/** The tool log's lines. */
const toolRuns = () => {
  const file = join(dir, 'tools.log')
  return existsSync(file) ? readFileSync(file, 'utf8').trim().split('\n') : []
}

/** Resolves once `check` holds (polled; no fixed sleep). */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 25))
}

describe('a durable task whose worker is killed', () => {
  test('is finished by another worker without repeating a completed model call or tool', async () => {
    server.enqueue(callTools('r1', [{ id: 'l1', name: 'lookup', args: {} }]))
    server.enqueue(
      callTools('r2', [
        { id: 'c1', name: 'charge', args: {} },
        { id: 'n1', name: 'notify', args: {} },
      ]),
    )
    server.enqueue(reply('r3', 'Paid; the customer may not have been told.'))

    const a = startWorker('worker-a', 'start', 'invoice')
    const workflowId = (await a.line('started ')).slice('started '.length)
    // Both calls of the second response are running on A: kill it there.
    await until(() => toolRuns().length === 3)
    a.process.kill('SIGKILL')
    await a.exited

    const b = startWorker('worker-b', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({
      sessionId: 'invoice',
      reason: 'completed',
      text: 'Paid; the customer may not have been told.',
    })

    // Each model response was asked for once: A made r1 and r2, B only r3.
    expect(server.requests.length).toBe(3)
    const toolMessages = (server.requests[2]!.body as { messages: { role: string }[] }).messages.filter(
      (m) => m.role === 'tool',
    )
    expect(toolMessages).toEqual([
      { role: 'tool', tool_call_id: 'l1', content: 'invoice 42: 500 cents' },
      { role: 'tool', tool_call_id: 'c1', content: 'charged 500 cents' },
      { role: 'tool', tool_call_id: 'n1', content: STOPPED },
    ])
    // The completed lookup ran once; charge ran again on B with the same call id; notify did not.
    expect(toolRuns()).toEqual([
      'lookup l1 resumed=false worker-a',
      expect.stringMatching(/^(charge c1|notify n1) resumed=false worker-a$/),
      expect.stringMatching(/^(charge c1|notify n1) resumed=false worker-a$/),
      'charge c1 resumed=true worker-b',
    ])

    const history = await storedHistory('invoice')
    const ids = history.map((record) => record.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(
      history.map((record) => {
        if (!('role' in record)) return record.type
        if (record.role === 'assistant')
          return `assistant ${
            toolCallsOf(record)
              .map((c) => c.id)
              .join(',') || 'text'
          }`
        if (record.role === 'tool') return `tool ${record.toolCallId} ${record.status}`
        return record.role
      }),
    ).toEqual([
      'user',
      'assistant l1',
      'tool l1 success',
      'assistant c1,n1',
      'tool c1 success',
      'tool n1 error',
      'assistant text',
      'task_metadata',
    ])
    // B carried the task on, and its end names the task's input, as A's would have.
    expect(history.at(-1)).toMatchObject({ type: 'task_metadata', inputId: `${workflowId}:input` })

    // DBOS: the workflow finished on B, and it journaled nothing but its start and that the run
    // (watched for cancellation) ended: the killed worker's watch step was never recorded.
    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      expect(await dbos.getWorkflow(workflowId)).toMatchObject({ status: 'SUCCESS', executorId: 'worker-b' })
      expect((await dbos.listWorkflowSteps(workflowId))?.map((step) => step.name)).toEqual([
        'kode.task.begin',
        'kode.task.watch',
      ])
    } finally {
      await dbos.destroy()
    }

    // With DBOS's idle-transaction timeout in the URL, its pool sends no query on connect that the
    // next one would overlap: pg has nothing to warn about.
    expect(a.stderr()).not.toContain('DeprecationWarning')
    expect(b.stderr()).not.toContain('DeprecationWarning')
    // Its reaper would otherwise take the next test's task before that test is ready.
    b.process.kill('SIGKILL')
    await b.exited
  })

  test("is superseded by a plain run that began on its session first: that run's end is not taken for its own", async () => {
    server.enqueue(callTools('p1', [{ id: 'n2', name: 'notify', args: {} }]))
    server.enqueue(reply('p2', 'Something else, answered.'))

    const a = startWorker('worker-c', 'start', 'overtaken')
    const workflowId = (await a.line('started ')).slice('started '.length)
    await until(() => toolRuns().includes('notify n2 resumed=false worker-c'))
    a.process.kill('SIGKILL')
    await a.exited

    // The host runs the session's next message as a plain `agent.run` (no `messageId`), once the
    // dead worker's lease has expired: it settles the stopped call and ends, naming no input.
    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    const client = createClient({
      api: 'openai-chat',
      model: 'gpt-4o',
      apiKey: 'sk-test',
      baseUrl: server.url,
    })
    try {
      const agent = await createAgent({ client, store, sessionId: 'overtaken' })
      const plain = await eventually(() => agent.run('Something else').done)
      expect(plain).toMatchObject({ reason: 'completed', text: 'Something else, answered.' })
      await agent.close()
    } finally {
      await store.close()
    }

    const b = startWorker('worker-d', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    // Whichever the worker prints first: the task's outcome, or why its workflow failed.
    const ended = await Promise.race(
      [b.line('finished '), b.line('failed ')].map((line) => line.catch((error: Error) => error.message)),
    )
    expect(ended).toMatch(/^failed /)
    const failed = JSON.parse(ended.slice('failed '.length))
    expect(failed).toMatchObject({ name: 'DurableTaskError', code: 'task_superseded', typed: true })
    expect(failed.message).toMatch(
      /^the task of input .+:input stopped with its worker, and the task of input .+ began on its session before it was carried on$/,
    )
    // The dead task's model call was not made again, nor the plain run's.
    expect(server.requests.length).toBe(5)
    b.process.kill('SIGKILL')
    await b.exited
  })

  test('overtaken by another durable task whose worker died too, it is superseded, and the other is carried on', async () => {
    server.enqueue(callTools('t1', [{ id: 'ov1', name: 'notify', args: {} }]))
    server.enqueue(callTools('t2', [{ id: 'ov2', name: 'notify', args: {} }]))
    server.enqueue(reply('t3', 'The second task, done.'))
    const a = startWorker('worker-da', 'start', 'twice', 'twice-first')
    await until(() => toolRuns().includes('notify ov1 resumed=false worker-da'))
    a.process.kill('SIGKILL')
    await a.exited
    // The session's next task begins once A's lease expired (settling ov1), and its worker dies too.
    const b = startWorker('worker-db', 'start', 'twice', 'twice-second')
    await until(() => toolRuns().includes('notify ov2 resumed=false worker-db'))
    b.process.kill('SIGKILL')
    await b.exited

    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      // The first task's worker comes back first: DBOS carries on its task alone. It must not carry
      // the second task's input on under its own name.
      const backA = startWorker('worker-da', 'recover')
      const first = await dbos
        .retrieveWorkflow('twice-first')
        .getResult()
        .catch((error: unknown) => error)
      const { name, code } = first as { name?: string; code?: string }
      expect([name, code]).toEqual(['DurableTaskError', 'task_superseded'])
      const backB = startWorker('worker-db', 'recover')
      expect(await dbos.retrieveWorkflow('twice-second').getResult()).toMatchObject({
        sessionId: 'twice',
        reason: 'completed',
        text: 'The second task, done.',
      })
      const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
      try {
        const ends = (await store.read('twice')).filter(
          (record) => !('role' in record) && record.type === 'task_metadata',
        )
        expect(ends.map((record) => 'inputId' in record && record.inputId)).toEqual(['twice-second:input'])
      } finally {
        await store.close()
      }
      for (const back of [backA, backB]) {
        back.process.kill('SIGKILL')
        await back.exited
      }
    } finally {
      await dbos.destroy()
    }
  })

  test("a continuation killed right after its last record reports its own outcome, not a later task's", async () => {
    // The session's first task pauses for approval (a plain run in this process).
    server.enqueue(callTools('q1', [{ id: 'a1', name: 'file_note', args: {} }]))
    await withAgent('approve-then-die', [fileNote], async (agent) => {
      expect(await agent.run('File a note').done).toMatchObject({ reason: 'awaiting_approval' })
    })

    // Worker A carries it on with the approval and dies right after the task's end is recorded,
    // before DBOS could record the workflow's.
    server.enqueue(reply('q2', 'Filed the note.'))
    const workflowId = 'continue-then-die'
    const a = startWorker(
      { executorId: 'worker-e', dieAt: 'task_metadata' },
      'continue',
      'approve-then-die',
      workflowId,
    )
    await a.exited
    expect(toolRuns()).toContain('file_note a1 resumed=false worker-e')

    // The session's next message runs (as a plain run) once A's lease expired, before the reaper.
    server.enqueue(reply('q3', 'Something else, answered.'))
    await withAgent('approve-then-die', [fileNote], async (agent) => {
      expect(await eventually(() => agent.run('Something else').done)).toMatchObject({
        text: 'Something else, answered.',
      })
    })
    const requests = server.requests.length

    const b = startWorker('worker-f', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({
      sessionId: 'approve-then-die',
      reason: 'completed',
      text: 'Filed the note.',
    })
    // Read from the history: no model call, no tool run again.
    expect(server.requests.length).toBe(requests)
    expect(toolRuns().filter((line) => line.startsWith('file_note'))).toEqual([
      'file_note a1 resumed=false worker-e',
    ])
    b.process.kill('SIGKILL')
    await b.exited
  })

  test('whose session is deleted before another worker carries it on fails typed, without running anything again', async () => {
    server.enqueue(callTools('d1', [{ id: 'l3', name: 'lookup', args: {} }]))
    server.enqueue(callTools('d2', [{ id: 'n3', name: 'notify', args: {} }]))
    const a = startWorker('worker-g', 'start', 'deleted')
    const workflowId = (await a.line('started ')).slice('started '.length)
    await until(() => toolRuns().includes('notify n3 resumed=false worker-g'))
    a.process.kill('SIGKILL')
    await a.exited

    // The user deletes the conversation once the dead worker's lease expired.
    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    try {
      await eventually(() => store.delete('deleted'))
      expect(await store.info('deleted')).toBeUndefined()
      const requests = server.requests.length
      const runs = toolRuns().length

      const b = startWorker('worker-h', 'reap')
      expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
      const ended = await Promise.race(
        [b.line('finished '), b.line('failed ')].map((line) => line.catch((error: Error) => error.message)),
      )
      expect(ended).toMatch(/^failed /)
      expect(JSON.parse(ended.slice('failed '.length))).toMatchObject({
        name: 'DurableTaskError',
        code: 'session_deleted',
        typed: true,
      })
      // The task did not start over on a new, empty session: nothing asked, nothing run, nothing kept.
      expect(server.requests.length).toBe(requests)
      expect(toolRuns().length).toBe(runs)
      expect(await store.info('deleted')).toBeUndefined()
      b.process.kill('SIGKILL')
      await b.exited
    } finally {
      await store.close()
    }
  })

  test('killed while the model streams is carried on by asking for that response again, nothing of it kept', async () => {
    // The response stops half way and never ends: A is killed while it streams.
    server.enqueue({ ...reply('s1', 'A first answer that is long enough to be cut'), stallAfterBytes: 120 })
    server.enqueue(reply('s2', 'The whole answer.'))
    const before = server.requests.length
    const a = startWorker('worker-i', 'start', 'streaming')
    const workflowId = (await a.line('started ')).slice('started '.length)
    await until(() => server.requests.length === before + 1)
    await new Promise((resolve) => setTimeout(resolve, 200))
    a.process.kill('SIGKILL')
    await a.exited

    const b = startWorker('worker-j', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'The whole answer.' })
    expect(server.requests.length).toBe(before + 2)
    const history = await storedHistory('streaming')
    expect(kindsOf(history)).toEqual(['user', 'assistant', 'task_metadata'])
    expect(history.at(-1)).toMatchObject({ inputId: `${workflowId}:input` })
    b.process.kill('SIGKILL')
    await b.exited
  })

  test('killed while it compacts is carried on: the history is compacted once, no completed model call or tool again', async () => {
    server.enqueue(callTools('m1', [{ id: 'g1', name: 'read_log', args: {} }]))
    server.enqueue(reply('m-sum', 'Summary: the whole log was read, nothing wrong in it.'))
    server.enqueue(reply('m2', 'The log is fine.'))
    const before = server.requests.length
    const workflowId = 'compact-then-die'
    const a = startWorker(
      { executorId: 'worker-k', dieAt: 'compaction_start', smallWindow: true },
      'start',
      'compacting',
      workflowId,
    )
    await a.exited
    // A read the log, then died as it began to compact: its summary was never asked for.
    expect(server.requests.length).toBe(before + 1)
    expect(toolRuns()).toContain('read_log g1 resumed=false worker-k')

    const b = startWorker({ executorId: 'worker-l', smallWindow: true }, 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({ sessionId: 'compacting', reason: 'completed', text: 'The log is fine.' })
    // B asked for the summary, then for the answer: m1 was not asked for again.
    expect(server.requests.length).toBe(before + 3)
    expect(server.requests[before + 1]!.rawBody).toContain(JSON.stringify(COMPACTION_PROMPT).slice(1, 60))
    expect(server.requests[before + 2]!.rawBody).toContain('Summary: the whole log was read')
    expect(toolRuns().filter((line) => line.startsWith('read_log'))).toEqual([
      'read_log g1 resumed=false worker-k',
    ])
    const history = await storedHistory('compacting')
    expect(kindsOf(history)).toEqual([
      'user',
      'assistant',
      'tool',
      'compaction',
      'assistant',
      'task_metadata',
    ])
    expect(history.at(-1)).toMatchObject({ inputId: `${workflowId}:input` })
    b.process.kill('SIGKILL')
    await b.exited
  })

  test('killed as its call asks for approval pauses once on another worker; approved, the call runs exactly once', async () => {
    server.enqueue(callTools('v1', [{ id: 'a2', name: 'file_note', args: {} }]))
    const before = server.requests.length
    const workflowId = 'approval-then-die'
    const a = startWorker(
      { executorId: 'worker-m', dieAt: 'tool_approval_request' },
      'start',
      'pending-approval',
      workflowId,
    )
    await a.exited
    expect(server.requests.length).toBe(before + 1)

    // B carries the task on: it pauses again for the same call, with no model call.
    const b = startWorker('worker-n', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const ended = await Promise.race(
      [b.line('finished '), b.line('failed ')].map((line) => line.catch((error: Error) => error.message)),
    )
    expect(ended).toMatch(/^finished /)
    const paused = JSON.parse(ended.slice('finished '.length))
    expect(paused).toMatchObject({
      sessionId: 'pending-approval',
      reason: 'awaiting_approval',
      pendingApprovals: [{ toolCallId: 'a2', toolName: 'file_note' }],
    })
    expect(server.requests.length).toBe(before + 1)
    b.process.kill('SIGKILL')
    await b.exited

    // The human approves; worker C carries the task on with the decision.
    server.enqueue(reply('v2', 'Filed the note.'))
    const c = startWorker('worker-o', 'continue', 'pending-approval', 'approve-a2', 'a2')
    await c.line('started ')
    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      const done = await dbos.retrieveWorkflow('approve-a2').getResult()
      expect(done).toMatchObject({ reason: 'completed', text: 'Filed the note.' })
    } finally {
      await dbos.destroy()
    }
    expect(server.requests.length).toBe(before + 2)
    expect(toolRuns().filter((line) => line.startsWith('file_note a2'))).toEqual([
      'file_note a2 resumed=false worker-o',
    ])
    const history = await storedHistory('pending-approval')
    const count = (kind: string) => kindsOf(history).filter((k) => k === kind).length
    expect([count('approval_request'), count('approval_decision')]).toEqual([1, 1])
    expect(history.filter((record) => 'role' in record && record.role === 'tool')).toMatchObject([
      { toolCallId: 'a2', status: 'success' },
    ])
    c.process.kill('SIGKILL')
    await c.exited
  })

  test("killed while a sub-agent runs, it is carried on once the sub-agent's session is free too", async () => {
    server.enqueue(callTools('x1', [{ id: 'e1', name: 'research', args: { prompt: 'Dig it up' } }]))
    server.enqueue(callTools('x2', [{ id: 'k1', name: 'dig', args: {} }]))
    const workflowId = 'sub-agent-then-die'
    const a = startWorker('worker-r', 'start', 'researching', workflowId)
    await until(() => toolRuns().includes('dig k1 resumed=false worker-r'))
    a.process.kill('SIGKILL')
    await a.exited

    // The dead worker held the sub-agent's session too, under a lease that renews on its own
    // schedule: it may run out after the task's. This store holds it as that lease would.
    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, leaseMs: 1_000 })
    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      const child = (await store.list()).find((info) => info.parentSessionId === 'researching')!
      expect(child.subAgent).toMatchObject({ name: 'research', parentToolCallId: 'e1' })
      const held = await eventually(() => store.acquire(child.id))
      server.enqueue(reply('x3', 'Nothing to dig up.'))
      const requests = server.requests.length
      // A comes back under its executor id: DBOS carries the task on, and it needs the sub-agent's
      // session to settle what the sub-agent left.
      const back = startWorker('worker-r', 'recover')
      await back.line(`acquire ${child.id}`)
      await held.release()
      const done = await dbos.retrieveWorkflow(workflowId).getResult()
      expect(done).toMatchObject({
        sessionId: 'researching',
        reason: 'completed',
        text: 'Nothing to dig up.',
      })
      expect(server.requests.length).toBe(requests + 1)
      expect(toolRuns().filter((line) => line.startsWith('dig'))).toEqual(['dig k1 resumed=false worker-r'])
      // Both sessions answer every call once: the sub-agent's, and the parent's call that ran it.
      const answered = (history: HistoryEvent[]) =>
        history.flatMap((record) =>
          'role' in record && record.role === 'tool' ? [`${record.toolCallId} ${record.status}`] : [],
        )
      expect(answered(await store.read(child.id))).toEqual(['k1 error'])
      const history = await store.read('researching')
      expect(answered(history)).toEqual(['e1 error'])
      expect(history.at(-1)).toMatchObject({ type: 'task_metadata', inputId: `${workflowId}:input` })
      back.process.kill('SIGKILL')
      await back.exited
    } finally {
      await dbos.destroy()
      await store.close()
    }
  })

  test('paused mid-tool and taken over, its worker wakes fenced off: nothing it does after lands', async () => {
    server.enqueue(callTools('z1', [{ id: 'n7', name: 'notify', args: {} }]))
    server.enqueue(reply('z2', 'Carried on while the first worker slept.'))
    const workflowId = 'paused-then-woken'
    const letGo = join(dir, 'let-go')
    const a = startWorker({ executorId: 'worker-s', holdUntil: letGo }, 'start', 'paused', workflowId)
    await until(() => toolRuns().includes('notify n7 resumed=false worker-s'))
    // A stops (a long GC pause, a frozen VM) in the middle of its tool call; its lease runs out.
    a.process.kill('SIGSTOP')

    const b = startWorker('worker-t', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({ reason: 'completed', text: 'Carried on while the first worker slept.' })
    b.process.kill('SIGKILL')
    await b.exited
    const taken = await storedHistory('paused')

    // A wakes up: its tool call finishes, and the result it would append is refused.
    writeFileSync(letGo, '')
    a.process.kill('SIGCONT')
    expect(await a.line('run-')).toBe('run-failed session_lease_lost')
    expect(await storedHistory('paused')).toEqual(taken)
    expect(
      taken.flatMap((record) =>
        'role' in record && record.role === 'tool' ? [`${record.toolCallId} ${record.status}`] : [],
      ),
    ).toEqual(['n7 error'])
    expect(toolRuns().filter((line) => line.startsWith('notify n7'))).toEqual([
      'notify n7 resumed=false worker-s',
    ])
    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      // B's end stands: A's failure is not recorded over it.
      expect(await dbos.getWorkflow(workflowId)).toMatchObject({ status: 'SUCCESS', executorId: 'worker-t' })
      expect(await dbos.retrieveWorkflow(workflowId).getResult()).toMatchObject({
        text: 'Carried on while the first worker slept.',
      })
    } finally {
      await dbos.destroy()
    }
    a.process.kill('SIGKILL')
    await a.exited
  })

  test('carried on after a crash and cancelled while it waits for its session, it stops waiting and never runs', async () => {
    server.enqueue(callTools('w1', [{ id: 'n4', name: 'notify', args: {} }]))
    const workflowId = 'cancel-while-waiting'
    const a = startWorker('worker-p', 'start', 'waiting', workflowId)
    await until(() => toolRuns().includes('notify n4 resumed=false worker-p'))
    a.process.kill('SIGKILL')
    await a.exited
    const requests = server.requests.length

    // Another writer takes the session once A's lease expired, and keeps it.
    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema, leaseMs: 1_000 })
    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    try {
      const held = await eventually(() => store.acquire('waiting'))
      const records = (await store.read('waiting')).length
      // A comes back under its executor id: DBOS carries the task on, and it waits for the session.
      const back = startWorker('worker-p', 'recover')
      await back.line('acquire waiting')
      await dbos.cancelWorkflow(workflowId)
      // DBOS polls for cancellations about once a second: the wait stops soon after.
      await stopsPrinting(back, 'acquire waiting', 1_500, 15_000)
      await held.release()
      expect(back.lines().filter((line) => line.startsWith('factory'))).toEqual([])
      expect(server.requests.length).toBe(requests)
      expect((await store.read('waiting')).length).toBe(records)
      expect(await dbos.getWorkflow(workflowId)).toMatchObject({ status: 'CANCELLED' })
      back.process.kill('SIGKILL')
      await back.exited
    } finally {
      await dbos.destroy()
      await store.close()
    }
  })

  test('carried on past a watch step an earlier version recorded without an outcome, it runs inside a step: a cancel interrupts it', async () => {
    server.enqueue(callTools('o1', [{ id: 'n5', name: 'notify', args: {} }]))
    const workflowId = 'old-watch-step'
    const a = startWorker('worker-q', 'start', 'old-step', workflowId)
    await until(() => toolRuns().includes('notify n5 resumed=false worker-q'))
    a.process.kill('SIGKILL')
    await a.exited

    // What an earlier version could leave: its watch step recorded with nothing (its run had
    // ended without an end in the history), the workflow's own end lost with its worker.
    const db = new pg.Client({ connectionString: postgresUrl() })
    await db.connect()
    try {
      const inserted = await db.query(
        `insert into "${dbosSchema}".operation_outputs
           (workflow_uuid, function_id, output, serialization, function_name, started_at_epoch_ms, completed_at_epoch_ms, application_name)
         select workflow_uuid, function_id + 1, $2, serialization, 'kode.task.watch', started_at_epoch_ms, completed_at_epoch_ms, application_name
         from "${dbosSchema}".operation_outputs where workflow_uuid = $1 and function_name = 'kode.task.begin'`,
        [
          workflowId,
          JSON.stringify({ json: null, meta: { values: ['undefined'] }, __dbos_serializer: 'superjson' }),
        ],
      )
      expect(inserted.rowCount).toBe(1)
    } finally {
      await db.end()
    }

    // A comes back: DBOS carries the task on; its next response streams and never ends.
    server.enqueue({ ...reply('o2', 'An answer that is long enough to be cut off'), stallAfterBytes: 120 })
    const before = server.requests.length
    const back = startWorker('worker-q', 'recover')
    await until(() => server.requests.length === before + 1)
    const dbos = await DBOSClient.create({
      systemDatabaseUrl: dbosDatabaseUrl(),
      systemDatabaseSchemaName: dbosSchema,
    })
    const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
    try {
      await dbos.cancelWorkflow(workflowId)
      // The run is interrupted (DBOS polls for cancellations about once a second): the task ends.
      const deadline = Date.now() + 15_000
      const ended = async () => {
        const last = (await store.read('old-step')).at(-1)
        return last !== undefined && !('role' in last) && last.type === 'task_metadata'
      }
      while (!(await ended())) {
        if (Date.now() > deadline) throw new Error('the carried-on task was not interrupted by the cancel')
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      const history = await store.read('old-step')
      expect(history.at(-1)).toMatchObject({ type: 'task_metadata', inputId: `${workflowId}:input` })
      expect(
        history.map((record) => {
          if (!('role' in record)) return record.type
          if (record.role === 'assistant') return `assistant ${record.stopReason}`
          if (record.role === 'tool') return `tool ${record.toolCallId} ${record.status}`
          return record.role
        }),
      ).toEqual(['user', 'assistant tool_use', 'tool n5 error', 'interrupt', 'task_metadata'])
      expect(back.lines().filter((line) => line.startsWith('factory'))).toEqual(['factory old-step'])
      expect(await dbos.getWorkflow(workflowId)).toMatchObject({ status: 'CANCELLED' })
      // The recorded watch step was passed; the one the task ran in ended with the cancellation,
      // which DBOS does not record as a step's outcome.
      expect((await dbos.listWorkflowSteps(workflowId))?.map((step) => step.name)).toEqual([
        'kode.task.begin',
        'kode.task.watch',
      ])
    } finally {
      back.process.kill('SIGKILL')
      await back.exited
      await dbos.destroy()
      await store.close()
    }
  })

  test('asking for structured output, it is carried on with its schema and gives the validated value', async () => {
    server.enqueue(callTools('s1', [{ id: 'c9', name: 'charge', args: {} }]))
    // B's first answer is not valid: the corrective turn, on B, asks again with the schema.
    server.enqueue(reply('s2', '{"paid":"yes"}'))
    server.enqueue(reply('s3', '{"paid":true,"cents":500}'))
    const before = server.requests.length
    const a = startWorker({ executorId: 'worker-s', output: true }, 'start', 'structured')
    const workflowId = (await a.line('started ')).slice('started '.length)
    await until(() => toolRuns().includes('charge c9 resumed=false worker-s'))
    a.process.kill('SIGKILL')
    await a.exited

    const b = startWorker('worker-t', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({ reason: 'completed', output: { paid: true, cents: 500 } })
    // Every model call asked for the schema, A's and B's alike.
    const formats = server.requests
      .slice(before)
      .map((request) => (request.body as { response_format?: { type: string } }).response_format?.type)
    expect(formats).toEqual(['json_schema', 'json_schema', 'json_schema'])
    b.process.kill('SIGKILL')
    await b.exited
  })

  test('asking for structured output and killed right after its end, it reports the value read back from its answer', async () => {
    server.enqueue(reply('s4', '{"paid":true,"cents":700}'))
    const workflowId = 'structured-then-die'
    const a = startWorker(
      { executorId: 'worker-u', output: true, dieAt: 'task_metadata' },
      'start',
      'structured-end',
      workflowId,
    )
    await a.exited
    const requests = server.requests.length

    const b = startWorker('worker-v', 'reap')
    expect(await b.line('resumed ')).toBe(`resumed ${workflowId}`)
    const outcome = JSON.parse((await b.line('finished ')).slice('finished '.length))
    expect(outcome).toMatchObject({ reason: 'completed', output: { paid: true, cents: 700 } })
    // Read from the history: no model call again.
    expect(server.requests.length).toBe(requests)
    b.process.kill('SIGKILL')
    await b.exited
  })
})

/** Resolves once `worker` printed no new `prefix` line for `quietMs`; fails if it still does after `withinMs`. */
async function stopsPrinting(
  worker: Worker,
  prefix: string,
  quietMs: number,
  withinMs: number,
): Promise<void> {
  const count = () => worker.lines().filter((line) => line.startsWith(prefix)).length
  const deadline = Date.now() + withinMs
  let seen = count()
  let since = Date.now()
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100))
    if (count() !== seen) {
      seen = count()
      since = Date.now()
    } else if (Date.now() - since >= quietMs) return
    if (Date.now() > deadline) throw new Error(`the worker still printed "${prefix}" after ${withinMs} ms`)
  }
}

/** Retries `attempt` while the session's writer is still the dead worker's (its lease not expired). */
async function eventually<T>(attempt: () => Promise<T>): Promise<T> {
  for (;;) {
    try {
      return await attempt()
    } catch (error) {
      if ((error as { code?: string }).code !== 'session_locked') throw error
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }
}

/** The approval-gated tool of the workers, as a plain agent in this process declares it. */
const fileNote = defineTool({
  name: 'file_note',
  description: 'Files a note, once a human approved it',
  parameters: Type.Object({}),
  needsApproval: true,
  execute: () => 'filed',
})

/** The session's history as the workers left it, read with a store of this process. */
async function storedHistory(sessionId: string): Promise<HistoryEvent[]> {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
  try {
    return await store.read(sessionId)
  } finally {
    await store.close()
  }
}

/** Each record's role, or its type for a record that is no message. */
function kindsOf(history: readonly HistoryEvent[]): string[] {
  return history.map((record) => ('role' in record ? record.role : record.type))
}

/** Runs `use` with a plain agent of this process on the session, then closes it and its store. */
async function withAgent(
  sessionId: string,
  tools: Parameters<typeof createAgent>[0]['tools'],
  use: (agent: Awaited<ReturnType<typeof createAgent>>) => Promise<void>,
): Promise<void> {
  const store = createPostgresSessionStore({ connectionString: postgresUrl(), schema })
  const client = createClient({ api: 'openai-chat', model: 'gpt-4o', apiKey: 'sk-test', baseUrl: server.url })
  try {
    const agent = await createAgent({ client, store, sessionId, tools })
    try {
      await use(agent)
    } finally {
      await agent.close()
    }
  } finally {
    await store.close()
  }
}
