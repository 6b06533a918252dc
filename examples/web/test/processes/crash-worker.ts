// Host A of the crash scenario: a worker process running one task of a session on the shared
// Postgres, the model at the test's scripted SSE server. Its tools log each run to the tool log;
// `lookup` finishes, `charge` and `notify` never do here (the test kills this process during them).
//   crash-worker <config-json>
// prints `running <toolCallId>` as each tool starts.
import { appendFileSync } from 'node:fs'
import { createAgent } from '@kode/core'
import { createClient } from '@kode/providers'
import { createFileSessionStore } from '@kode/session/file'
import { createPostgresSessionStore } from '@kode/session-postgres'
import { crashTools } from '../crash-tools.js'

interface WorkerConfig {
  /** A file store's directory; without it, the Postgres store below. */
  fileDir?: string
  postgresUrl: string
  schema: string
  sessionId: string
  modelUrl: string
  toolLog: string
  leaseMs: number
}

const config = JSON.parse(process.argv[2]!) as WorkerConfig
const store = config.fileDir
  ? createFileSessionStore({ dir: config.fileDir })
  : createPostgresSessionStore({
      connectionString: config.postgresUrl,
      schema: config.schema,
      leaseMs: config.leaseMs,
    })
const client = createClient({
  api: 'openai-chat',
  model: 'gpt-4o',
  apiKey: 'sk-test',
  baseUrl: config.modelUrl,
})
const tools = crashTools({
  host: 'a',
  log: (line) => appendFileSync(config.toolLog, `${line}\n`),
  started: (id) => process.stdout.write(`running ${id}\n`),
  hang: (name) => name !== 'lookup',
})
const agent = createAgent({ client, store, sessionId: config.sessionId, tools })
await agent.run('Pay the invoice').done
