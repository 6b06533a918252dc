// A worker process of the durable-task scenario: DBOS launched with its own executor id, Kode
// tasks on the shared Postgres, the model at a scripted SSE server.
//   worker <config-json> start <sessionId> [workflowId]
//       start a task ("Pay the invoice") and print `started <workflowId>`; its tools log their run
//       and then never finish (the test kills this worker during them), but `lookup` and `read_log`;
//       `research` is a sub-agent, whose tool `dig` never finishes either
//   worker <config-json> continue <sessionId> <workflowId> [toolCallId]
//       carry the session's task on as durable task <workflowId>, approving call `toolCallId` (`a1`)
//   worker <config-json> recover
//       launch only: DBOS carries on the tasks left pending under this executor id; prints
//       `acquire <sessionId>` at each attempt to take a session's writer, `factory <sessionId>`
//       each time a task's agent is built
//   worker <config-json> reap
//       sweep for tasks whose worker died; for each one resumed, print `resumed <workflowId>`, then
//       `finished <outcome JSON>` once it is done (its tools finish), or `failed <error JSON>`
//       (its name, code, message, and whether DurableTaskError.is knows it) when its workflow failed
// Every tool run appends `<tool> <toolCallId> resumed=<bool> <worker>` to the tool log first.
// With `dieAt` in the config, the worker kills itself (SIGKILL) when its agent emits that event:
// a crash at an exact point of the task. With `smallWindow`, the model's context window is 4 000
// tokens, so a `read_log` result (about 3 000) makes the agent compact before its next model call.
// With `holdUntil` (a file), the tools of a `start` worker finish once that file exists, and the
// worker prints `run-ended <reason>` or `run-failed <code>` when its agent's run settles. With
// `output`, a `start` task asks for the structured answer `invoice` (every worker declares it).
import { appendFileSync, existsSync } from 'node:fs'
import { DBOS } from '@dbos-inc/dbos-sdk'
import { createAgent, defineSubAgent, defineTool } from '@kode/core'
import { createDurableAgents, DurableTaskError } from '@kode/durable-dbos'
import { createClient } from '@kode/providers'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { Type } from '@sinclair/typebox'

interface WorkerConfig {
  postgresUrl: string
  /** DBOS's system database URL (see the test helpers' `dbosDatabaseUrl`). */
  dbosUrl: string
  schema: string
  dbosSchema: string
  executorId: string
  modelUrl: string
  toolLog: string
  /** An agent event type: the worker SIGKILLs itself when it is emitted. */
  dieAt?: string
  /** A model whose context window is small enough for one `read_log` result to need compaction. */
  smallWindow?: boolean
  /** A file: the tools of a `start` worker finish once it exists, rather than never. */
  holdUntil?: string
  /** A `start` task asks for the structured output `invoice`. */
  output?: boolean
}

const [json, mode, sessionId, workflowId, approve = 'a1'] = process.argv.slice(2)
const config = JSON.parse(json!) as WorkerConfig
const say = (line: string) => process.stdout.write(`${line}\n`)
const hang = mode === 'start'

/** Never, or once the `holdUntil` file exists. */
async function held(): Promise<void> {
  const { holdUntil } = config
  if (holdUntil === undefined) return new Promise(() => {})
  while (!existsSync(holdUntil)) await new Promise((resolve) => setTimeout(resolve, 50))
}

/** A tool that logs each run, then never finishes on the worker to be killed. */
function tool(name: string, onResume: 'error' | 'rerun', result: string) {
  return defineTool({
    name,
    description: `The ${name} tool`,
    parameters: Type.Object({}),
    onResume,
    execute: async (_args, ctx) => {
      appendFileSync(
        config.toolLog,
        `${name} ${ctx.toolCallId} resumed=${ctx.resumed} ${config.executorId}\n`,
      )
      if (hang && name !== 'lookup') await held()
      return result
    },
  })
}
const tools = [
  tool('lookup', 'error', 'invoice 42: 500 cents'),
  // Idempotent by its call id (a payment API's idempotency key): safe to run again.
  tool('charge', 'rerun', 'charged 500 cents'),
  // Not idempotent (an email): answered as "may or may not have run" instead.
  tool('notify', 'error', 'notified'),
  // A sub-agent whose one tool, `dig`, never finishes on the worker to be killed.
  defineSubAgent({
    name: 'research',
    description: 'Researches with a sub-agent',
    tools: [tool('dig', 'error', 'dug')],
  }),
  // A long result: in a small window, the next model call waits for a compaction.
  defineTool({
    name: 'read_log',
    description: 'Reads the whole log',
    parameters: Type.Object({}),
    execute: (_args, ctx) => {
      appendFileSync(
        config.toolLog,
        `read_log ${ctx.toolCallId} resumed=${ctx.resumed} ${config.executorId}\n`,
      )
      return `log: ${'a line of the log with some words in it; '.repeat(280)}`
    },
  }),
  defineTool({
    name: 'file_note',
    description: 'Files a note, once a human approved it',
    parameters: Type.Object({}),
    needsApproval: true,
    execute: (_args, ctx) => {
      appendFileSync(
        config.toolLog,
        `file_note ${ctx.toolCallId} resumed=${ctx.resumed} ${config.executorId}\n`,
      )
      return 'filed'
    },
  }),
]

const store = createPostgresSessionStore({
  connectionString: config.postgresUrl,
  schema: config.schema,
  leaseMs: 1_000,
})
const client = createClient({
  api: 'openai-chat',
  model: 'gpt-4o',
  apiKey: 'sk-test',
  baseUrl: config.modelUrl,
  ...(config.smallWindow ? { catalog: { 'gpt-4o': { contextWindow: 4_000, maxOutputTokens: 500 } } } : {}),
})
DBOS.setConfig({
  name: 'kode-worker-test',
  systemDatabaseUrl: config.dbosUrl,
  systemDatabaseSchemaName: config.dbosSchema,
  applicationVersion: 'kode-worker-test-1',
  executorID: config.executorId,
  logLevel: 'error',
})
const durable = createDurableAgents({
  store:
    mode === 'recover'
      ? {
          ...store,
          acquire: (id) => {
            say(`acquire ${id}`)
            return store.acquire(id)
          },
        }
      : store,
  agentFactory: async ({ sessionId, store }) => {
    if (mode === 'recover') say(`factory ${sessionId}`)
    const agent = await createAgent({ client, store, sessionId, tools })
    const { dieAt } = config
    if (config.holdUntil !== undefined && hang) {
      // How the run ends on this worker, once its tools were let go.
      const run = agent.run.bind(agent)
      agent.run = (input, options) => {
        const started = run(input, options)
        started.done.then(
          (outcome) => say(`run-ended ${outcome.reason}`),
          (error: { code?: string }) => say(`run-failed ${error.code}`),
        )
        return started
      }
    }
    if (dieAt !== undefined)
      agent.events.on('event', (event) => {
        if (event.type === dieAt) process.kill(process.pid, 'SIGKILL')
      })
    return agent
  },
  staleAfterMs: 500,
  outputs: {
    invoice: Type.Object({ paid: Type.Boolean(), cents: Type.Number() }, { additionalProperties: false }),
  },
})
await DBOS.launch()

switch (mode) {
  case 'start': {
    const handle = await durable.start(sessionId!, 'Pay the invoice', {
      workflowId,
      ...(config.output ? { output: 'invoice' } : {}),
    })
    say(`started ${handle.workflowId}`)
    break
  }
  case 'continue': {
    await durable.continue(sessionId!, { approvals: [{ toolCallId: approve, approved: true }], workflowId })
    say(`started ${workflowId}`)
    break
  }
  case 'recover':
    say('ready')
    break
  case 'reap': {
    for (;;) {
      const resumed = await durable.reap()
      for (const workflowId of resumed) {
        say(`resumed ${workflowId}`)
        try {
          const outcome = await durable.result(workflowId, { pollingIntervalMs: 100 })
          say(`finished ${JSON.stringify(outcome)}`)
        } catch (error) {
          const { name, code, message } = error as { name: string; code?: string; message: string }
          say(`failed ${JSON.stringify({ name, code, message, typed: DurableTaskError.is(error) })}`)
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
  }
  default:
    throw new Error(`unknown mode ${mode}`)
}
