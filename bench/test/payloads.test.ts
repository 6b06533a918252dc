import { afterAll, beforeAll, describe, expect, test } from 'vitest'
import { prepare } from '../providers/clients/floor.mjs'
import { prepare as prepareItems } from '../providers/clients/floor-items.mjs'
import { expectedResult, SCENARIOS } from '../providers/scenarios.mjs'
import { startBenchServer } from '../providers/server.mjs'
import { mismatch } from '../providers/verify.mjs'
import { WIRE_NAMES } from '../providers/wires/index.mjs'

// Keeps the benchmark honest: the generated streams carry exactly what the scenarios promise,
// and the floor client (the yardstick of every ratio) reads all of it back through the server.

let server: Awaited<ReturnType<typeof startBenchServer>>
beforeAll(async () => {
  server = await startBenchServer()
})
afterAll(() => server.close())

describe.each(WIRE_NAMES)('%s', (wire) => {
  test.each(SCENARIOS)('the floor client reads the whole %s stream from the server', async (scenario) => {
    const run = await prepare({ wire, origin: server.origin, scenario })
    const result = await run()
    expect(result.deltas).toBe(expectedResult(scenario).deltas)
    expect(mismatch(scenario, result)).toBeUndefined()
  })

  test.each(SCENARIOS)(
    'the item-per-delta floor reads the whole %s stream, an item per delta',
    async (scenario) => {
      const run = await prepareItems({ wire, origin: server.origin, scenario })
      const result = await run()
      expect(result.deltas).toBe(expectedResult(scenario).deltas)
      expect(mismatch(scenario, result)).toBeUndefined()
    },
  )
})

test('a result missing text is reported wrong', () => {
  const { text } = expectedResult('text')
  expect(mismatch('text', { text: text.slice(0, -1), toolCalls: [] })).toMatch(/^text: /)
})

test('a tool call with different arguments is reported wrong', () => {
  const [call] = expectedResult('tool').toolCalls
  const args = { ...call!.args, content: `${call!.args.content} ` }
  expect(mismatch('tool', { text: '', toolCalls: [{ name: call!.name, args }] })).toMatch(/arguments differ/)
})
