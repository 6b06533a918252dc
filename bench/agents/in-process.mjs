// One client running the agents task with no network: a `fetch` installed as the global one
// serves each turn's prerendered response (the server's bytes, in its 4 KiB writes) by counting
// model calls. No socket, no HTTP parser and no server process, so what is left is the client's
// own work, the same on every run: the input for instruction counts (valgrind counts
// instructions, not time, so the machine's load does not move them):
//
//   node bench/agents/in-process.mjs <client> [--tasks N] [--check]
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --predictable --hash-seed=1 \
//     --random-seed=1 --initial-old-space-size=256 bench/agents/in-process.mjs kode
//
// (without those flags, where the major garbage collections fall moves the count by tens of
// millions of instructions from run to run)
//
// `--tasks N` runs the task N times in the process (the figure printed is the last one's CPU; with
// 0, none: what loading and preparing the client cost, to subtract);
// `--heap` also prints the heap's growth over the (last) task: with a young generation too large to
// fill (`node --min-semi-space-size=256 --max-semi-space-size=256`, no collection during the task),
// that is the bytes the task allocated, the same on every run.
// `--check` also checks every request's history as the server does (inside the measurement: use
// it to prove a client right, not to count). Prints the CPU ms of the (last) task, its events and
// its CPU per turn (too noisy to compare on a loaded machine, unlike the counts).
// Rendering and loading happen before it, but they count under valgrind: compare totals of two
// builds or clients for the same arguments, never one total alone.
import { parseArgs } from 'node:util'
import { byteStream } from '../lib/byte-stream.mjs'
import { formatThreadCpu, threadCpu, threadCpuSince } from '../lib/thread-cpu.mjs'
import { waitForQuiet } from '../providers/warm-up.mjs'
import { CLIENT_NAMES, CLIENTS } from './clients/index.mjs'
import { checkRequest } from './history-check.mjs'
import { renderAll, renderTurn } from './model-stream.mjs'
import { keyOf, runTool, TURNS } from './task.mjs'
import { mismatch } from './verify.mjs'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    tasks: { type: 'string', default: '1' },
    check: { type: 'boolean', default: false },
    heap: { type: 'boolean', default: false },
  },
})
const [client] = positionals
if (!CLIENT_NAMES.includes(client)) {
  console.error(`usage: in-process.mjs <${CLIENT_NAMES.join('|')}> [--tasks N] [--check]`)
  process.exit(2)
}

const CHUNK_SIZE = 4 * 1024
const bodies = renderAll()
let modelCalls = 0
const turnStarts = []
const encoder = new TextEncoder()
const cpuMs = (usage) => (usage.user + usage.system) / 1000

// Installed before any library loads: some capture the global fetch when a client is built.
globalThis.fetch = async function scriptedModel(input, init) {
  const url = String(input?.url ?? input)
  if (!url.endsWith('/chat/completions')) return new Response('ok')
  turnStarts.push(process.cpuUsage())
  // A real fetch encodes the body it sends: so does this one, for every client alike.
  encoder.encode(String(init?.body))
  modelCalls++
  let body = bodies[modelCalls - 1] ?? renderTurn(modelCalls, 'no such turn')
  if (values.check) {
    const { turn, problem } = checkRequest(JSON.parse(String(init?.body)))
    if (problem || turn !== modelCalls) body = renderTurn(modelCalls, `history check failed: ${problem}`)
  }
  return new Response(byteStream(body, CHUNK_SIZE), { headers: { 'content-type': 'text/event-stream' } })
}

let ran = []
const { prepare } = await CLIENTS[client].load()
const run = await prepare({
  origin: 'http://in-process',
  record: (key) => ran.push(key),
  runTool,
  keyOf,
  maxTurns: TURNS + 5,
})
// Loads the web streams and Response code for every client before measuring, then lets the
// background compiles of that and of the imports finish, so the CPU printed is the task's.
await new Response(byteStream(Buffer.from('ok'), CHUNK_SIZE)).text()
await waitForQuiet()

let result
let cpu
let end
let heapGrowth
let before
let threads
for (let task = 1; task <= Number(values.tasks); task++) {
  ran = []
  modelCalls = 0
  turnStarts.length = 0
  const heapBefore = process.memoryUsage().heapUsed
  const threadsBefore = threadCpu()
  before = process.cpuUsage()
  result = await run()
  end = process.cpuUsage()
  threads = threadCpuSince(threadsBefore)
  heapGrowth = process.memoryUsage().heapUsed - heapBefore
  cpu = cpuMs(end) - cpuMs(before)
  const wrong = mismatch(result, ran, modelCalls)
  if (wrong) {
    console.error(`${client}, task ${task}: ${wrong}`)
    process.exit(1)
  }
}
if (result === undefined) console.log(`${client}: loaded, no task run`)
else {
  const events = result.events === undefined ? '' : `, ${result.events} events`
  const perTurn = turnStarts.map((at, i) => cpuMs(turnStarts[i + 1] ?? end) - cpuMs(at))
  const mean = (from, to) =>
    (perTurn.slice(from - 1, to).reduce((x, y) => x + y, 0) / (to - from + 1)).toFixed(2)
  console.log(
    `${client}: ${cpu.toFixed(1)} ms${events}; before turn 1 ${(cpuMs(turnStarts[0]) - cpuMs(before)).toFixed(2)}; ` +
      `per turn: turn 1 ${perTurn[0].toFixed(2)}, ` +
      `turns 2-6 ${mean(2, 6)}, turns 45-49 ${mean(45, 49)}` +
      (threads ? `; ${formatThreadCpu(threads)}` : '') +
      (values.heap ? `; heap growth ${(heapGrowth / 1e6).toFixed(2)} MB` : ''),
  )
}
