// One client reading one scenario's stream with no network: the rendered bytes are served in the
// server's 16 KiB slices through a `fetch` that returns them as a Response. No socket, no HTTP
// parser and no server process, so what is left is the client's own work; and it is the same
// work on every run, which makes it the input for instruction counts (valgrind counts
// instructions, not time, so the machine's load does not move them):
//
//   node bench/providers/in-process.mjs <floor|floor-items|kode|path to a build's index.js>[+batches] <wire> <scenario>
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//     node --single-threaded bench/providers/in-process.mjs kode anthropic text
//
// A fourth argument `setup` does everything but the read: a whole run's count minus that one is
// the read's own (imports and building the client are outside the bench's measured window too).
// `twice` reads the stream once unmeasured first: a `twice` count minus a plain one is a warm
// read's, which says how much of a cold read is first use (the code not yet optimized).
//
// Prints the CPU ms of the read (user + system) and, on Linux, how it splits between the main
// thread and V8's background threads (see bench/lib/thread-cpu.mjs). Rendering happens before it,
// so under valgrind compare totals of two clients on the same wire and scenario, never one total
// alone.
import { pathToFileURL } from 'node:url'
import { byteStream } from '../lib/byte-stream.mjs'
import { formatThreadCpu, threadCpu, threadCpuSince } from '../lib/thread-cpu.mjs'
import { readFloor } from './clients/floor.mjs'
import { readFloorItems } from './clients/floor-items.mjs'
import { TOOL } from './scenarios.mjs'
import { CHUNK_SIZE } from './server.mjs'
import { waitForQuiet } from './warm-up.mjs'
import { renderStream } from './wires/index.mjs'

const [client, wire, scenario, only] = process.argv.slice(2)
if (!client || !wire || !scenario) {
  console.error('usage: in-process.mjs <floor|floor-items|kode|path to index.js>[+batches] <wire> <scenario>')
  process.exit(2)
}
const bytes = renderStream(wire, scenario)

/** The rendered stream as a byte stream, one server slice per read. */
const body = () => byteStream(bytes, CHUNK_SIZE)

let run
if (client === 'floor') {
  run = () => readFloor(wire, body())
} else if (client === 'floor-items') {
  run = () => readFloorItems(wire, body())
} else {
  const batches = client.endsWith('+batches')
  const name = batches ? client.slice(0, -'+batches'.length) : client
  const specifier = name === 'kode' ? '@kode/providers' : pathToFileURL(name).href
  const providers = await import(specifier)
  const kode = providers.createClient({
    api: wire,
    model: 'bench-model',
    apiKey: 'bench',
    baseUrl: 'http://in-process/v1',
    fetch: async () => new Response(body(), { headers: { 'content-type': 'text/event-stream' } }),
  })
  const request = {
    messages: [{ role: 'user', id: '1', createdAt: 0, parts: [{ type: 'text', text: 'hi' }] }],
    tools: [TOOL],
  }
  const check = (item) => {
    if (item.type === 'done' && item.message.stopReason === 'error')
      throw new Error(item.message.errorMessage)
  }
  run = batches
    ? async () => {
        for await (const batch of providers.readBatches(kode.stream(request)))
          for (const item of batch) check(item)
      }
    : async () => {
        for await (const item of kode.stream(request)) check(item)
      }
}

// Loads the web streams and Response code for both kinds of client before measuring, then lets
// the background compiles of that and of the imports finish, so the CPU printed is the read's.
await new Response(new ReadableStream({ start: (c) => c.close() })).text()
await waitForQuiet()
const threadsBefore = threadCpu()
const before = process.cpuUsage()
// `setup`: everything but the read, whose count subtracted from a whole run's leaves the read's own.
if (only === 'twice') await run()
if (only !== 'setup') await run()
const cpu = process.cpuUsage(before)
const threads = formatThreadCpu(threadCpuSince(threadsBefore))
console.log(`${((cpu.user + cpu.system) / 1000).toFixed(1)} ms${threads ? ` (${threads})` : ''}`)
