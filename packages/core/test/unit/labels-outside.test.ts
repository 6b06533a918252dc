import { describe, expect, test } from 'vitest'
import { type CodeBlock, parseCodeBlocks } from '../../src/formatters/code-blocks.js'
import { type LabelLine, labelsOutside, scanLabels } from '../../src/formatters/labels.js'

/** The rule as first written: each label checked against every block. */
function labelsOutsideByPairs(lines: readonly LabelLine[], blocks: readonly CodeBlock[]): LabelLine[] {
  return lines.filter((line) => !blocks.some((block) => line.start > block.start && line.start < block.end))
}

/** A small seeded generator (mulberry32), so a failure names the text that shows it. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Pieces models write: labels, fences of every kind (indented, tilde, longer, unclosed), CRLF. */
const PIECES = [
  'Thought: x\n',
  'Action: read_file\n',
  'Args: {"a": 1}\n',
  'Final Answer: done\n',
  'Observation: 42\n',
  '**Action:** d\n',
  '__Final Answer__: e\n',
  'Action Input: {}\n',
  '  action: b\n',
  '```\n',
  '```python\n',
  '````\n',
  '   ```json\n',
  '    ```\n',
  '~~~\n',
  '~~~~py\n',
  '```\r\n',
  'Action: c\r\n',
  'text\n',
  'print(1)\n',
  '\n',
  'x ```\n',
  '``` `inline`\n',
]

function randomText(next: () => number): string {
  const count = Math.floor(next() * 30)
  let text = ''
  for (let i = 0; i < count; i++) text += PIECES[Math.floor(next() * PIECES.length)]
  // Sometimes the text stops mid-line, as a cut response does.
  return next() < 0.3 ? text.slice(0, Math.floor(next() * text.length)) : text
}

describe('labels outside code blocks', () => {
  test('the same labels as checking each label against every block, over random responses', () => {
    const next = random(20261201)
    for (let i = 0; i < 5000; i++) {
      const text = randomText(next)
      const lines = scanLabels(text)
      const blocks = parseCodeBlocks(text)
      expect(labelsOutside(lines, blocks), JSON.stringify(text)).toEqual(labelsOutsideByPairs(lines, blocks))
    }
  })

  test('each label and each block is looked at a bounded number of times (a long response of many small blocks stays linear)', () => {
    let reads = 0
    const counted = <T extends object>(value: T): T =>
      new Proxy(value, {
        get(target, key, receiver) {
          reads++
          return Reflect.get(target, key, receiver)
        },
      })
    let text = ''
    for (let i = 0; i < 300; i++) text += 'Thought: step\n```\nx\n```\n'
    text += 'Action: a\nArgs: {}\n'
    const lines = scanLabels(text).map(counted)
    const blocks = parseCodeBlocks(text).map(counted)
    expect(lines).toHaveLength(302)
    expect(blocks).toHaveLength(300)
    const outside = labelsOutside(lines, blocks)
    expect(outside).toHaveLength(302)
    // Checking every pair reads some 270,000 fields here.
    expect(reads).toBeLessThanOrEqual(8 * (lines.length + blocks.length))
  })
})
