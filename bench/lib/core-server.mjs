// The scripted model of the core benchmark, in its own process so that serving never competes
// with the measured engine for CPU or its event loop. Prints `ready <url>`; exits when stdin closes.
//
// Every response streams ~120 words of text; until the conversation holds TURNS - 1 assistant
// messages it also calls the `lookup` tool (arguments in 8 fragments), then it answers plainly.
import { createSseTestServer, frameChat } from '../../packages/providers/dist/testing/index.js'

const TURNS = Number(process.argv[2] ?? 50)
const WORDS = 'the engine turns each delta into an event and persists every record as it goes '.split(' ')

function response(turn) {
  const id = `chatcmpl-bench-${turn}`
  const chunk = (delta, finish = null) =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      choices: [{ index: 0, delta, finish_reason: finish }],
    })
  const payloads = [chunk({ role: 'assistant', content: '' })]
  for (let i = 0; i < 120; i++) payloads.push(chunk({ content: `${WORDS[i % WORDS.length]} ` }))
  const last = turn === TURNS
  if (!last) {
    const args = JSON.stringify({ query: `topic number ${turn} `.repeat(8) })
    payloads.push(
      chunk({
        tool_calls: [
          { index: 0, id: `call_${turn}`, type: 'function', function: { name: 'lookup', arguments: '' } },
        ],
      }),
    )
    const size = Math.ceil(args.length / 8)
    for (let i = 0; i < args.length; i += size) {
      payloads.push(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(i, i + size) } }] }))
    }
  }
  payloads.push(chunk({}, last ? 'stop' : 'tool_calls'))
  payloads.push(
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      choices: [],
      usage: { prompt_tokens: 1000 * turn, completion_tokens: 150 },
    }),
  )
  return { body: frameChat(payloads) }
}

const server = await createSseTestServer({
  chunks: { maxBytes: 1024, seed: 7 },
  handler: (request) => {
    const turn = request.body.messages.filter((m) => m.role === 'assistant').length + 1
    return response(turn)
  },
})
process.stdout.write(`ready ${server.url}\n`)
process.stdin.resume()
process.stdin.on('end', async () => {
  await server.close()
  process.exit(0)
})
