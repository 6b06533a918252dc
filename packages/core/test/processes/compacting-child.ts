// A separate process running a long tool loop on a model with a small window, so a test can kill
// it while the engine asks for a compaction summary.
//   compacting-child <dir> <baseUrl> <sessionId>
// Prints `event <type>` for each event; the test kills it once the summary request arrived.
import { createAgent } from '@kode/core'
import { createClient } from '@kode/providers'
import { createFileSessionStore } from '@kode/session/file'
import { readChunk, TINY } from '../helpers/small-window.js'

const [dir, baseUrl, sessionId] = process.argv.slice(2)
if (!dir || !baseUrl || !sessionId) throw new Error('usage: compacting-child <dir> <baseUrl> <sessionId>')

let ids = 0
const agent = createAgent({
  client: createClient({
    api: 'openai-chat',
    model: 'tiny',
    catalog: TINY,
    apiKey: 'sk-test-key-0123456789',
    baseUrl,
    now: () => 1_000,
    createId: () => `m${++ids}`,
  }),
  store: createFileSessionStore({ dir, now: () => 1_000 }),
  tools: [readChunk],
  system: 'You read logs.',
  sessionId,
  maxTurns: 100,
  now: () => 1_000,
  createId: () => `id${++ids}`,
})
for await (const event of agent.run('Read the whole log')) process.stdout.write(`event ${event.type}\n`)
