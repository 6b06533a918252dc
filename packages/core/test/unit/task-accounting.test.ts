import { describe, expect, test } from 'vitest'
import { TaskAccounting } from '../../src/task/accounting.js'

describe('TaskAccounting', () => {
  test('a sub-agent that ran a quarter of a million sub-agents of its own is counted, not a stack overflow', () => {
    const accounting = new TaskAccounting('parent', () => 0, undefined)
    const subAgents = Array.from({ length: 250_000 }, (_, i) => ({ sessionId: `grandchild-${i}` }))
    accounting.addSubAgent({ main: { sessionId: 'child' }, subAgents })
    const { subAgents: counted } = accounting.summary()
    expect(counted).toHaveLength(250_001)
    expect([counted[0]?.sessionId, counted.at(-1)?.sessionId]).toEqual(['child', 'grandchild-249999'])
  })
})
