// One client running the agents task N times in one process against the real scripted model: the
// agents server (server-process.mjs) in a child process, on 127.0.0.1, reached through Node's own
// `fetch`. It is in-process.mjs with the network put back, so that instruction counts can tell
// what the HTTP client costs each loop (valgrind does not follow the child, so only the client is
// counted; it counts instructions, not time, so the machine's load does not move them):
//
//   node bench/agents/over-http.mjs <client> [--tasks N]
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null node --predictable --hash-seed=1 \
//     --random-seed=1 --initial-old-space-size=256 bench/agents/over-http.mjs kode --tasks 3
//
// A task's count is the process's with `--tasks N` less the one with `--tasks N-1` (with 0: the
// loading, the server's start and the HTTP parser's warm-up, to subtract). Before the tasks, as in
// worker.mjs, one large response is read with `fetch` (it loads undici and warms its parser the
// same way for every client) and the process waits until it is quiet. Prints the CPU ms of the
// (last) task and its split between threads (noisy; compare the counts).
//
// How reads fall is not fixed over a socket (how many of the server's 4 KiB writes one read
// returns depends on timing), so counts of one N move by up to about 20 million from run to run,
// and the optimizing compiler's work lands in whichever task it runs in (over HTTP it never
// settles: Node's stream code is deoptimized and optimized again in later tasks): compare means
// over several tasks. Figures and what they say: docs/benchmarks.md, "The warm task over HTTP,
// counted".
import { parseArgs } from 'node:util'
import { formatThreadCpu, threadCpu, threadCpuSince } from '../lib/thread-cpu.mjs'
import { startServerProcess } from '../providers/server-control.mjs'
import { warmHttpParser } from '../providers/warm-up.mjs'
import { CLIENT_NAMES, CLIENTS } from './clients/index.mjs'
import { keyOf, runTool, TURNS } from './task.mjs'
import { mismatch } from './verify.mjs'

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { tasks: { type: 'string', default: '1' } },
})
const [client] = positionals
if (!CLIENT_NAMES.includes(client)) {
  console.error(`usage: over-http.mjs <${CLIENT_NAMES.join('|')}> [--tasks N]`)
  process.exit(2)
}

// Counts model calls, as worker.mjs's tap does; installed before any library loads.
let modelCalls = 0
const bareFetch = globalThis.fetch
globalThis.fetch = function countedFetch(input, init) {
  if (String(input?.url ?? input).endsWith('/chat/completions')) modelCalls++
  return bareFetch(input, init)
}
const cpuMs = (usage) => (usage.user + usage.system) / 1000

const server = await startServerProcess(new URL('./server-process.mjs', import.meta.url))
try {
  let ran = []
  const { prepare } = await CLIENTS[client].load()
  const run = await prepare({
    origin: server.origin,
    record: (key) => ran.push(key),
    runTool,
    keyOf,
    maxTurns: TURNS + 5,
  })
  await warmHttpParser(server.origin, bareFetch)

  let result
  let cpu
  let threads
  for (let task = 1; task <= Number(values.tasks); task++) {
    ran = []
    modelCalls = 0
    const threadsBefore = threadCpu()
    const before = process.cpuUsage()
    result = await run()
    cpu = cpuMs(process.cpuUsage(before))
    threads = threadCpuSince(threadsBefore)
    const wrong = mismatch(result, ran, modelCalls)
    if (wrong) {
      console.error(`${client}, task ${task}: ${wrong}`)
      process.exitCode = 1
      break
    }
  }
  if (result === undefined) console.log(`${client}: loaded, no task run`)
  else {
    const events = result.events === undefined ? '' : `, ${result.events} events`
    console.log(`${client}: ${cpu.toFixed(1)} ms${events}${threads ? `; ${formatThreadCpu(threads)}` : ''}`)
  }
} finally {
  await server.stop()
}
