import { describe, expect, test } from 'vitest'
import type { RenderCommand } from '../../src/display/render-commands.js'
import { CommandRenderer } from '../../src/display/renderer.js'
import { createStyle } from '../../src/display/style.js'

function terminal(columns = 80) {
  let text = ''
  return {
    out: {
      columns,
      write: (chunk: string) => {
        text += chunk
      },
    },
    text: () => text,
  }
}

const plain = (live = false, thinking: 'collapse' | 'expand' = 'collapse') => {
  const t = terminal()
  const renderer = new CommandRenderer(t.out, { style: createStyle(false), live, thinking, animate: false })
  return { renderer, text: t.text }
}

const S = 'main'

describe('CommandRenderer on a pipe (not live)', () => {
  test('writes text lines as markdown', () => {
    const { renderer, text } = plain()
    renderer.render({ type: 'text_line', sessionId: S, line: { kind: 'prose', text: '- **bold** item' } })
    expect(text()).toBe('• bold item\n')
  })

  test('does not write the open line', () => {
    const { renderer, text } = plain()
    renderer.render({ type: 'text_partial', sessionId: S, text: 'half a line' })
    expect(text()).toBe('')
  })

  test('collapses thinking to a header line', () => {
    const { renderer, text } = plain()
    renderer.render({ type: 'thinking_start', sessionId: S })
    renderer.render({ type: 'thinking_delta', sessionId: S, text: 'secret plan' })
    renderer.render({
      type: 'thinking_end',
      sessionId: S,
      header: 'Plan',
      text: 'Plan\nsecret plan',
      durationMs: 1500,
    })
    expect(text()).toBe('✻ Thought for 1.5s · Plan\n')
  })

  test('expands thinking when asked to', () => {
    const { renderer, text } = plain(false, 'expand')
    renderer.render({ type: 'thinking_end', sessionId: S, header: 'Plan', text: 'Plan\nstep two' })
    expect(text()).toBe('✻ Thought · Plan\n  Plan\n  step two\n')
  })

  test('lists sources numbered, the URL after a title, the escape character removed', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'sources',
      sessionId: S,
      sources: [
        { label: 'A \u001b[31mpage', url: 'https://a.example/' },
        { label: 'https://b.example/', url: 'https://b.example/' },
        { label: 'Contract.pdf' },
      ],
    })
    expect(text()).toBe(
      'Sources:\n  1. A [31mpage https://a.example/\n  2. https://b.example/\n  3. Contract.pdf\n',
    )
  })

  test('writes a tool start line and a result line with status and preview', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'tool_start',
      sessionId: S,
      toolCallId: 'c',
      toolName: 'read_file',
      summary: 'README.md',
    })
    renderer.render({
      type: 'tool_done',
      sessionId: S,
      toolCallId: 'c',
      toolName: 'read_file',
      summary: 'README.md',
      status: 'error',
      preview: 'README.md does not exist',
      durationMs: 12,
    })
    expect(text()).toBe('▸ read_file README.md\n✗ read_file README.md (12ms) → README.md does not exist\n')
  })

  test('writes the usage line', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'usage',
      sessionId: S,
      usage: { inputTokens: 1200, outputTokens: 340, cacheReadTokens: 800 },
      costUsd: 0.0041,
      context: { percent: 3.2, window: 200_000 },
    })
    expect(text()).toBe('  ↳ 1.2k in (800 cached) · 340 out · $0.0041 · context 3% of 200k\n')
  })

  test('writes the todo list with a mark per status', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'todo_list',
      sessionId: S,
      todos: [
        { content: 'Read', status: 'completed' },
        { content: 'List', status: 'in_progress', activeForm: 'Listing' },
        { content: 'Sum up', status: 'pending' },
      ],
    })
    expect(text()).toBe('Todos\n  ☑ Read\n  ◐ Listing\n  ☐ Sum up\n')
  })

  test('writes the interrupt notice', () => {
    const { renderer, text } = plain()
    renderer.render({ type: 'interrupt', sessionId: S })
    expect(text()).toBe('⏹ Interrupted by user\n')
  })

  test('writes a sub-agent status line', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'sub_agent_status',
      sessionId: 'k',
      name: 'explore',
      color: 2,
      tone: 'ok',
      text: 'list_dir → a/',
    })
    expect(text()).toBe('  ⎿ explore ✓ list_dir → a/\n')
  })

  test('ends a task with its totals', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'task_end',
      sessionId: S,
      reason: 'completed',
      metadata: {
        main: { turnCount: 2, usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } },
        subAgents: [],
      },
    })
    expect(text()).toBe('■ Done · 2 turns · 15 tokens\n')
  })

  test('separates blocks of different kinds with a blank line', () => {
    const { renderer, text } = plain()
    renderer.render({ type: 'text_line', sessionId: S, line: { kind: 'prose', text: 'a' } })
    renderer.render({ type: 'tool_start', sessionId: S, toolCallId: 'c', toolName: 't', summary: '' })
    expect(text()).toBe('a\n\n▸ t\n')
  })

  test('strips control characters from model and tool text', () => {
    const { renderer, text } = plain()
    renderer.render({
      type: 'text_line',
      sessionId: S,
      line: { kind: 'prose', text: 'evil\x1b]0;title\x07 text' },
    })
    expect(text()).toBe('evil]0;title text\n')
  })
})

describe('CommandRenderer on a live terminal', () => {
  const commands: RenderCommand[] = [
    { type: 'tool_start', sessionId: S, toolCallId: 'c', toolName: 'read_file', summary: 'README.md' },
  ]

  test('shows a running tool with a spinner in the live area', () => {
    const { renderer, text } = plain(true)
    for (const c of commands) renderer.render(c)
    expect(text()).toBe('⠋ read_file README.md\n')
  })

  test('advances the spinner in place', () => {
    const { renderer, text } = plain(true)
    for (const c of commands) renderer.render(c)
    renderer.tick()
    expect(text()).toBe('⠋ read_file README.md\n\x1b[1A\r\x1b[J⠙ read_file README.md\n')
  })

  test('erases the live area before a finished line and redraws it below', () => {
    const { renderer, text } = plain(true)
    for (const c of commands) renderer.render(c)
    renderer.render({ type: 'text_line', sessionId: S, line: { kind: 'prose', text: 'hello' } })
    expect(text()).toBe('⠋ read_file README.md\n\x1b[1A\r\x1b[Jhello\n⠋ read_file README.md\n')
  })

  test('shows the open line of text until it completes', () => {
    const { renderer, text } = plain(true)
    renderer.render({ type: 'text_partial', sessionId: S, text: 'typing' })
    renderer.render({ type: 'text_line', sessionId: S, line: { kind: 'prose', text: 'typing done' } })
    expect(text()).toBe('typing\n\x1b[1A\r\x1b[Jtyping done\n')
  })

  // A live line must take exactly one row: the erase before the next redraw moves up one row per
  // line, and a line that wrapped would leave its first rows on the screen.
  test('shows tabs of the open line as the spaces a terminal would give them, cut to one row', () => {
    const { renderer, text } = plain(true)
    renderer.render({ type: 'text_partial', sessionId: S, text: `\t\t\t${'x'.repeat(70)}` })
    expect(text()).toBe(`…${' '.repeat(8)}${'x'.repeat(70)}\n`)
  })

  test('counts emoji a terminal draws two columns wide as two', () => {
    const { renderer, text } = plain(true)
    renderer.render({ type: 'text_partial', sessionId: S, text: '✅'.repeat(60) })
    expect(text()).toBe(`…${'✅'.repeat(39)}\n`)
  })

  test('cuts a thinking line and a running tool with tabs to one row', () => {
    const { renderer, text } = plain(true)
    renderer.render({ type: 'thinking_start', sessionId: S })
    renderer.render({ type: 'thinking_delta', sessionId: S, text: `step\t${'\t'.repeat(9)}done` })
    renderer.render({
      type: 'tool_start',
      sessionId: S,
      toolCallId: 'c',
      toolName: 'bash',
      summary: `make\t${'\t'.repeat(9)}all`,
    })
    const drawn = text().split('\x1b[J').at(-1)!.split('\n').slice(0, -1)
    expect(drawn).toEqual(['⠋ Thinking…', `  step${' '.repeat(72)}…`, `⠋ bash make${' '.repeat(67)}…`])
  })

  test('clear empties the live area', () => {
    const { renderer, text } = plain(true)
    for (const c of commands) renderer.render(c)
    renderer.clear()
    expect(text().endsWith('\x1b[1A\r\x1b[J')).toBe(true)
  })
})
