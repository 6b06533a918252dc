import { PassThrough } from 'node:stream'
import type { PendingApproval } from '@kode/core'
import { describe, expect, test } from 'vitest'
import { describeCall } from '../../src/approvals/describe.js'
import { terminalApprovals } from '../../src/approvals/terminal.js'
import type { MarkEscape } from '../../src/display/reveal.js'
import { createStyle, stripAnsi } from '../../src/display/style.js'

// What the approval prompt shows must be exactly what would run: characters a terminal shows as
// nothing are shown as escapes, and a shown escape cannot be mistaken for a backslash the model wrote.

const call = (toolName: string, args: Record<string, unknown>): PendingApproval => ({
  toolCallId: 'c1',
  toolName,
  arguments: JSON.stringify(args),
})

const bash = (command: string, mark?: MarkEscape) => describeCall(call('bash', { command }), mark).join('\n')

/** "hidden" written in Unicode tag characters (U+E0000 + ASCII): invisible on every terminal. */
const tagText = (ascii: string) =>
  [...ascii].map((c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('')

const inverse = createStyle(true).inverse

describe('invisible characters in an approval preview', () => {
  test('zero-width characters, the word joiner, the BOM and the soft hyphen are shown as escapes', () => {
    const shown = bash('rm -rf ./build\u200b\u200c\u200d\u2060\ufeff\u00ad')
    expect(shown).toContain('$ rm -rf ./build\\u200b\\u200c\\u200d\\u2060\\ufeff\\xad')
    for (const char of ['\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad'])
      expect(shown).not.toContain(char)
  })

  test('spaces that are not the ASCII space are shown as escapes: a shell does not split words at them', () => {
    // `rm -rf ./build<NBSP>/` is one argument, though it reads as two.
    const shown = bash('rm -rf ./build\u00a0/ x\u2002y\u2009z\u202f\u205f\u3000')
    expect(shown).toContain('$ rm -rf ./build\\xa0/ x\\u2002y\\u2009z\\u202f\\u205f\\u3000')
    expect(shown).not.toMatch(/[\u00a0\u2000-\u200a\u202f\u205f\u3000]/)
  })

  test('the braille blank is shown as an escape: it looks like a space and is not one', () => {
    const shown = bash('rm -rf ./build\u2800/')
    expect(shown).toBe('bash:\n  $ rm -rf ./build\\u2800/')
  })

  test('private-use characters are shown as escapes: a font may draw them as anything, or as nothing', () => {
    const shown = bash('cat a\ue000b\uf8ff \u{f0000}\u{ffffd}\u{100000}\u{10fffd}')
    expect(shown).toBe('bash:\n  $ cat a\\ue000b\\uf8ff \\u{f0000}\\u{ffffd}\\u{100000}\\u{10fffd}')
  })

  test('a tab is shown as \\t: in a command it splits words as a space would, but not inside quotes', () => {
    expect(bash("grep 'a\tb' x\ty")).toBe("bash:\n  $ grep 'a\\tb' x\\ty")
    expect(bash('a\tb', inverse)).toBe(`bash:\n  $ a${inverse('\\t')}b`)
  })

  test('tabs in the lines of a file are shown as \\t, one a tab, with nothing added: nesting still shows', () => {
    const content = 'func main() {\n\tif ok {\n\t\treturn\t// done\n\t}\n}\n'
    expect(describeCall(call('write_file', { path: 'main.go', content }))).toEqual([
      'write_file main.go (5 lines):',
      '  │ func main() {',
      '  │ \\tif ok {',
      '  │ \\t\\treturn\\t// done',
      '  │ \\t}',
      '  │ }',
    ])
    const edit = describeCall(
      call('edit_file', { path: 'Makefile', oldText: '\tgo build', newText: '    go build' }),
      inverse,
    )
    expect(edit).toEqual(['edit_file Makefile:', `  - ${inverse('\\t')}go build`, '  +     go build'])
  })

  test('spaces at the end or the start of a path are shown as escapes; spaces inside it are not', () => {
    expect(describeCall(call('write_file', { path: 'notes.txt  ', content: 'x' }))[0]).toBe(
      'write_file notes.txt\\x20\\x20 (1 lines):',
    )
    expect(describeCall(call('write_file', { path: ' my notes.txt', content: 'x' }))[0]).toBe(
      'write_file \\x20my notes.txt (1 lines):',
    )
    const edit = describeCall(
      call('edit_file', { path: 'a b.txt \u200b ', oldText: 'o', newText: 'n' }),
      inverse,
    )
    expect(edit[0]).toBe(`edit_file a b.txt ${inverse('\\u200b')}${inverse('\\x20')}:`)
  })

  test('hidden tag text is shown, one escape a character', () => {
    const shown = bash(`rm -rf ./build${tagText('; curl x')}`)
    expect(shown).toContain(
      '$ rm -rf ./build\\u{e003b}\\u{e0020}\\u{e0063}\\u{e0075}\\u{e0072}\\u{e006c}\\u{e0020}\\u{e0078}',
    )
    expect(shown).not.toMatch(/[\u{e0000}-\u{e007f}]/u)
  })

  test('variation selectors, other default-ignorables, separators, lone surrogates and unassigned code points are shown', () => {
    const cases: [string, string][] = [
      ['a\ufe00', 'a\\ufe00'],
      ['a\ufe0f', 'a\\ufe0f'],
      ['build1\ufe0f', 'build1\\ufe0f'],
      ['\u{1f600}\u{e0100}', '\u{1f600}\\u{e0100}'],
      ['\u{1f600}\ufe0f\ufe0f', '\u{1f600}\ufe0f\\ufe0f'],
      ['a\u034fb', 'a\\u034fb'],
      ['a\u3164b', 'a\\u3164b'],
      ['a\u115fb', 'a\\u115fb'],
      ['a\u180bb', 'a\\u180bb'],
      ['a\u{1d173}b', 'a\\u{1d173}b'],
      ['a\u2028b', 'a\\u2028b'],
      ['a\ud800b', 'a\\ud800b'],
      ['a\u{e0fff}b', 'a\\u{e0fff}b'],
      ['a\u0378b', 'a\\u0378b'],
    ]
    for (const [command, expected] of cases) expect(bash(command)).toBe(`bash:\n  $ ${expected}`)
  })

  test('ordinary emoji stay as they are: joiners, selectors and flag tags inside an emoji sequence', () => {
    // A ZWJ sequence, a heart with VS16, a skin tone, a rainbow flag, a keycap and the flag of Scotland.
    const emoji =
      '\u{1f469}\u200d\u{1f4bb} \u2764\ufe0f \u{1f44d}\u{1f3fd} \u{1f3f3}\ufe0f\u200d\u{1f308} 1\ufe0f\u20e3 '
    const scotland = `\u{1f3f4}${tagText('gbsct')}\u{e007f}`
    expect(bash(`git commit -m "${emoji}${scotland}"`)).toBe(`bash:\n  $ git commit -m "${emoji}${scotland}"`)
  })

  test('joiners, selectors and tags out of an emoji sequence are shown', () => {
    const cases: [string, string][] = [
      ['a\u200db', 'a\\u200db'],
      ['\u{1f600}\u200d\u200d\u{1f600}', '\u{1f600}\\u200d\\u200d\u{1f600}'],
      ['\u{1f600}\u200d', '\u{1f600}\\u200d'],
      ['\u200d\u{1f600}', '\\u200d\u{1f600}'],
      ['\u{1fc00}\ufe0f', '\\u{1fc00}\\ufe0f'],
      [
        `\u{1f3f4}${tagText('gbxyz')}\u{e007f}`,
        '\u{1f3f4}\\u{e0067}\\u{e0062}\\u{e0078}\\u{e0079}\\u{e007a}\\u{e007f}',
      ],
    ]
    for (const [command, expected] of cases) expect(bash(command)).toBe(`bash:\n  $ ${expected}`)
  })
})

describe('a shown escape cannot pass for a backslash the model wrote', () => {
  test('without colour a backslash the model wrote is shown doubled', () => {
    expect(bash("printf 'a\\nb' \\\n  | tr -d x")).toBe("bash:\n  $ printf 'a\\\\nb' \\\\\n  $   | tr -d x")
    const newline = describeCall(call('edit_file', { path: 'a\nb', oldText: 'o', newText: 'n' }))[0]
    const typed = describeCall(call('edit_file', { path: 'a\\nb', oldText: 'o', newText: 'n' }))[0]
    expect(newline).toBe('edit_file a\\nb:')
    expect(typed).toBe('edit_file a\\\\nb:')
  })

  test('with colour a shown escape is marked, and a backslash the model wrote stays as it is', () => {
    expect(bash("printf 'a\\nb'\u200b", inverse)).toBe(`bash:\n  $ printf 'a\\nb'${inverse('\\u200b')}`)
    const edit = describeCall(
      call('edit_file', { path: 'a\nb\\n', oldText: 'o\x1b[2J', newText: 'n' }),
      inverse,
    )
    expect(edit).toEqual([`edit_file a${inverse('\\n')}b\\n:`, `  - o${inverse('\\x1b')}[2J`, '  + n'])
    // Only the marks drive the terminal.
    expect(stripAnsi(edit.join('\n'))).not.toContain('\x1b')
  })

  test('the prompt on a terminal with colour keeps the marks', async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true })
    const output = new PassThrough()
    let written = ''
    output.on('data', (chunk: Buffer) => {
      written += chunk.toString()
    })
    const decide = terminalApprovals(false, {
      input,
      output,
      notify: () => {},
      style: createStyle(true),
    })
    const decided = decide([call('bash', { command: 'rm -rf ./build\u200b' })], new AbortController().signal)
    setTimeout(() => input.write('n\n'), 50)
    expect(await decided).toEqual([{ toolCallId: 'c1', approved: false }])
    expect(written).toContain(`$ rm -rf ./build${inverse('\\u200b')}`)
  })
})
