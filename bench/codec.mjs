// Codec micro-benchmark: encode/decode lines per second over a realistic mixed history.
// Run: pnpm --filter @kode/protocol build && node bench/codec.mjs
import { decodeHistoryEvent, encodeHistoryEvent } from '../packages/protocol/dist/index.js'
import { realisticHistory } from './lib/history-fixture.mjs'
import { median, printTable } from './lib/report.mjs'

const RECORDS = 20_000
const ROUNDS = 7
const history = realisticHistory(RECORDS)
const lines = history.map(encodeHistoryEvent)
const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l) + 1, 0)

function time(fn) {
  const start = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - start) / 1e9
}

// Warm up the JIT and the lazily compiled validators.
for (let i = 0; i < 2; i++) for (const line of lines) encodeHistoryEvent(decodeHistoryEvent(line))

const encode = median(
  Array.from({ length: ROUNDS }, () =>
    time(() => {
      for (const e of history) encodeHistoryEvent(e)
    }),
  ),
)
const decode = median(
  Array.from({ length: ROUNDS }, () =>
    time(() => {
      for (const l of lines) decodeHistoryEvent(l)
    }),
  ),
)
const parseOnly = median(
  Array.from({ length: ROUNDS }, () =>
    time(() => {
      for (const l of lines) JSON.parse(l)
    }),
  ),
)
const stringifyOnly = median(
  Array.from({ length: ROUNDS }, () =>
    time(() => {
      for (const e of history) JSON.stringify(e)
    }),
  ),
)

printTable(`history codec, ${RECORDS} mixed records (${(bytes / 1e6).toFixed(1)} MB), median of ${ROUNDS}`, [
  ['operation', 'records/s', 'MB/s', 'vs bare JSON'],
  [
    'encodeHistoryEvent',
    fmt(RECORDS / encode),
    (bytes / 1e6 / encode).toFixed(0),
    `${(encode / stringifyOnly).toFixed(2)}x`,
  ],
  ['JSON.stringify (floor)', fmt(RECORDS / stringifyOnly), (bytes / 1e6 / stringifyOnly).toFixed(0), '1.00x'],
  [
    'decodeHistoryEvent',
    fmt(RECORDS / decode),
    (bytes / 1e6 / decode).toFixed(0),
    `${(decode / parseOnly).toFixed(2)}x`,
  ],
  ['JSON.parse (floor)', fmt(RECORDS / parseOnly), (bytes / 1e6 / parseOnly).toFixed(0), '1.00x'],
])

function fmt(n) {
  return Math.round(n).toLocaleString('en-US')
}
