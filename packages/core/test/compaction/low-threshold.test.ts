import { defineTool } from '@kode/core'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'vitest'
import { collect, useHarness } from '../helpers/harness.js'
import { compactionsOf, isSummaryRequest, readChunk, TINY, toolLoopModel } from '../helpers/small-window.js'

/** A tool whose definition is long (as an MCP server's often are): about 450 tokens a request. */
const lookUp = defineTool({
  name: 'look_up',
  description: `Looks a term up in the project glossary. ${'The glossary covers every module. '.repeat(50)}`,
  parameters: Type.Object({ term: Type.String() }),
  execute: ({ term }) => term,
})

describe('a compaction', () => {
  const h = useHarness()

  test('leaves the request under the threshold, so the next turns do not compact again at once', async () => {
    const model = toolLoopModel(30)
    h().server.handle(model)
    const agent = h().createAgent({
      client: h().client({ model: 'tiny', catalog: TINY }),
      tools: [readChunk, lookUp],
      system: 'You read logs.',
      maxTurns: 40,
      compaction: { threshold: 0.5, keepRecent: 20 },
    })
    const { events, outcome } = await collect(agent.run('Read the whole log'))
    expect(outcome.reason).toBe('completed')
    const records = compactionsOf(await agent.history())
    expect(records.length).toBeGreaterThan(0)
    // Each chunk adds about 110 tokens: a compaction should make room for several of them.
    expect(records.length).toBeLessThanOrEqual(10)
    expect(h().server.requests.filter(isSummaryRequest)).toHaveLength(records.length)
    // What the compaction estimates it left is under the threshold (half of 3,500 input tokens).
    for (const record of records) expect(record.tokensAfter).toBeLessThan(1_750)
    expect(events.filter((e) => e.type === 'compaction_end').every((e) => e.compacted)).toBe(true)
  })
})
