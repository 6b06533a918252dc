// The agents task with no network, for instruction counts of the floor loop with and without
// @kode/providers: `fetch` is replaced by one that encodes the request body (as a real fetch does)
// and answers with the turn's rendered response. No socket, no HTTP parser and no server process,
// and the same work on every run, so valgrind's counts compare builds without the machine's load:
//
//   valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//     node --single-threaded bench/agents/in-process-providers.mjs <floor|kode-providers> [tasks]
//
// With `tasks` 0 the process loads everything and runs nothing: subtract that count from a run's
// to get the task's. Also prints the CPU ms of the tasks and of the last one's turns: too noisy to
// compare on a loaded machine, unlike the counts.
import { CLIENTS } from './clients/index.mjs'
import { renderAll } from './model-stream.mjs'
import { keyOf, runTool, TURNS } from './task.mjs'

const [client = 'kode-providers', tasks = '1'] = process.argv.slice(2)
const bodies = renderAll()
/** Bytes per read, as the server writes them. */
const SLICE = 4 * 1024
const encoder = new TextEncoder()
const cpuMs = (usage) => (usage.user + usage.system) / 1000

let turn = 0
const turnStarts = []
globalThis.fetch = async (_url, init) => {
  turnStarts.push(process.cpuUsage())
  encoder.encode(init.body)
  const body = bodies[turn++]
  const stream = new ReadableStream({
    type: 'bytes',
    start(controller) {
      for (let at = 0; at < body.length; at += SLICE)
        controller.enqueue(new Uint8Array(body.subarray(at, at + SLICE)))
      controller.close()
    },
  })
  return new Response(stream, { headers: { 'content-type': 'text/event-stream' } })
}

const { prepare } = await CLIENTS[client].load()
const run = await prepare({
  origin: 'http://in-process',
  record: () => {},
  runTool,
  keyOf,
  maxTurns: TURNS + 5,
})
// Load Node's fetch classes first, as the worker's warm-up request does.
new Headers({ accept: 'text/event-stream' })
await new Response('ok').text()

const before = process.cpuUsage()
for (let i = 0; i < Number(tasks); i++) {
  turn = 0
  turnStarts.length = 0
  const { finalText } = await run()
  if (!finalText) throw new Error('no final text')
}
const end = process.cpuUsage()
if (Number(tasks) > 0) {
  const perTurn = turnStarts.map((at, i) => cpuMs(turnStarts[i + 1] ?? end) - cpuMs(at))
  const mean = (from, to) =>
    (perTurn.slice(from - 1, to).reduce((x, y) => x + y, 0) / (to - from + 1)).toFixed(2)
  console.log(
    `${client}: ${(cpuMs(end) - cpuMs(before)).toFixed(1)} ms for ${tasks} task(s); the last one per turn: ` +
      `turn 1 ${perTurn[0].toFixed(2)}, turns 2-6 ${mean(2, 6)}, turns 45-49 ${mean(45, 49)}`,
  )
}
