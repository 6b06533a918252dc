import { describe, expect, test } from 'vitest'
import { renderInline, renderMarkdownLine } from '../../src/display/markdown.js'
import { createStyle } from '../../src/display/style.js'
import { markdownLines, TextStream } from '../../src/display/text-stream.js'

const plain = createStyle(false)
const color = createStyle(true)
const prose = (text: string) => renderMarkdownLine({ kind: 'prose', text }, plain)

describe('markdown lines', () => {
  test('a heading loses its hashes and is bold', () => {
    expect(prose('## Packages')).toBe('Packages')
    expect(renderMarkdownLine({ kind: 'prose', text: '### Sub' }, color)).toBe('\x1b[1mSub\x1b[22m')
  })

  test('bullets and numbered items', () => {
    expect(prose('- one')).toBe('• one')
    expect(prose('  * nested')).toBe('  • nested')
    expect(prose('2. two')).toBe('2. two')
  })

  test('task list items', () => {
    expect(prose('- [x] done')).toBe('☑ done')
    expect(prose('- [ ] open')).toBe('☐ open')
  })

  test('quotes and rules', () => {
    expect(prose('> said')).toBe('▎ said')
    expect(prose('---')).toBe('─'.repeat(40))
  })

  test('inline bold, italic, code and links', () => {
    expect(renderInline('**b** *i* `c` [t](https://x.y)', plain)).toBe('b i c t (https://x.y)')
    expect(renderInline('a `**not bold**` b', color)).toContain('**not bold**')
  })

  test('snake_case words are not italic', () => {
    expect(renderInline('read_file and list_dir', plain)).toBe('read_file and list_dir')
  })

  test('code blocks get a gutter and keep their text', () => {
    expect(renderMarkdownLine({ kind: 'fence', text: '```ts', lang: 'ts' }, plain)).toBe('┌─ ts')
    expect(renderMarkdownLine({ kind: 'code', text: '  **x**' }, plain)).toBe('│   **x**')
  })
})

describe('TextStream', () => {
  test('keeps the open line until its newline', () => {
    const stream = new TextStream()
    expect(stream.push('ab')).toEqual([])
    expect(stream.partial).toBe('ab')
    expect(stream.push('c\nd')).toEqual([{ kind: 'prose', text: 'abc' }])
    expect(stream.end()).toEqual([{ kind: 'prose', text: 'd' }])
  })

  test('a fence split across deltas still opens a block', () => {
    const stream = new TextStream()
    stream.push('``')
    expect(stream.push('`sh\nls\n')).toEqual([
      { kind: 'fence', text: '```sh', lang: 'sh' },
      { kind: 'code', text: 'ls' },
    ])
  })

  test('markdownLines splits a whole text', () => {
    expect(markdownLines('a\r\nb')).toEqual([
      { kind: 'prose', text: 'a' },
      { kind: 'prose', text: 'b' },
    ])
  })
})

test('inline code inside bold is still code', () => {
  expect(renderInline('**Where `x` is**', plain)).toBe('Where x is')
})
