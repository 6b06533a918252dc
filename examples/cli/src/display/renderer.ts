import type { TaskFinishReason, TodoItem } from '@kode/protocol'
import { formatDuration, taskSummaryLine, usageLine } from './format.js'
import { renderMarkdownLine } from './markdown.js'
import type { RenderCommand } from './render-commands.js'
import type { Style } from './style.js'
import { expandTabs, truncateToWidth, visibleWidth } from './style.js'
import { terminalSafe } from './terminal-safe.js'

/** Where the renderer writes: a terminal (or anything that records what it is given). */
export interface TerminalOutput {
  write(text: string): void
  /** The terminal's width in columns. */
  readonly columns: number
}

/** Options of {@link CommandRenderer}. */
export interface RendererOptions {
  style: Style
  /**
   * A live terminal: running tools get spinners and the open line of text and thinking are
   * shown in a live area at the bottom, redrawn in place. Off (output to a pipe or a file), only
   * finished lines are written.
   */
  live: boolean
  /** Thinking, once it ends: `collapse` to a header line (default), or `expand` to its whole text. */
  thinking?: 'collapse' | 'expand'
  /** Animate spinners with a timer (live only). Default true; tests turn it off and call `tick`. */
  animate?: boolean
}

interface LiveTool {
  name: string
  summary: string
  progress?: string
  pending: boolean
}

type Block = 'text' | 'tool' | 'thinking' | 'meta'

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
const THINKING_PREVIEW_LINES = 3
const TONE = { start: '▸', ok: '✓', error: '✗', done: '■' } as const
const TODO_MARK = { pending: '☐', in_progress: '◐', completed: '☑' } as const
const FINISHED: Record<TaskFinishReason, string> = {
  completed: 'Done',
  aborted: 'Interrupted',
  error: 'Failed',
  max_turns: 'Stopped at the turn limit',
  awaiting_approval: 'Waiting for your approval',
  structured_output_invalid: 'Failed: the answer did not match the output schema',
}

/**
 * Executes render commands against a terminal. Finished lines are written once; on a live
 * terminal the bottom of the screen is a live area (thinking preview, the open line of text,
 * spinners of running tools), erased and redrawn around every finished line.
 */
export class CommandRenderer {
  readonly #out: TerminalOutput
  readonly #style: Style
  readonly #live: boolean
  readonly #expandThinking: boolean
  readonly #animate: boolean
  #tools = new Map<string, LiveTool>()
  #thinking: string | undefined
  #partial = ''
  #drawnRows = 0
  #frame = 0
  #timer: ReturnType<typeof setInterval> | undefined
  #lastBlock: Block | undefined

  constructor(out: TerminalOutput, options: RendererOptions) {
    this.#out = out
    this.#style = options.style
    this.#live = options.live
    this.#expandThinking = options.thinking === 'expand'
    this.#animate = options.animate ?? true
  }

  /** Executes one command. */
  render(unsafe: RenderCommand): void {
    const command = withoutControls(unsafe)
    const s = this.#style
    switch (command.type) {
      case 'welcome': {
        const model = [command.provider, command.model].filter(Boolean).join(' ')
        this.#print('meta', `${s.bold('kode')} ${s.dim(`· ${model} · ${command.workDir}`)}`)
        return
      }
      case 'user_prompt':
        this.#lastBlock = undefined
        this.#print('meta', s.bold(`› ${command.text}`))
        return
      case 'thinking_start':
        this.#thinking = ''
        this.#redraw()
        return
      case 'thinking_delta':
        if (this.#thinking !== undefined) this.#thinking += command.text
        this.#redraw()
        return
      case 'thinking_end': {
        this.#thinking = undefined
        const took = command.durationMs !== undefined ? ` for ${formatDuration(command.durationMs)}` : ''
        const header = s.dim(`✻ Thought${took}${command.header ? ` · ${s.italic(command.header)}` : ''}`)
        const body = this.#expandThinking ? command.text.split('\n').map((line) => s.dim(`  ${line}`)) : []
        this.#print('thinking', header, ...body)
        return
      }
      case 'text_line':
        this.#partial = ''
        this.#print('text', renderMarkdownLine(command.line, s))
        return
      case 'text_partial':
        this.#partial = command.text
        this.#redraw()
        return
      case 'image':
        this.#print('text', s.magenta(`◆ image ${command.ref}`))
        return
      case 'sources':
        this.#print(
          'meta',
          s.dim('Sources:'),
          ...command.sources.map(
            ({ label, url }, i) =>
              `  ${s.dim(`${i + 1}.`)} ${label}${url === undefined || url === label ? '' : ` ${s.dim(url)}`}`,
          ),
        )
        return
      case 'tool_pending':
        if (!this.#tools.has(command.toolCallId))
          this.#tools.set(command.toolCallId, { name: command.toolName, summary: '', pending: true })
        this.#redraw()
        return
      case 'tool_start':
        this.#tools.set(command.toolCallId, {
          name: command.toolName,
          summary: command.summary,
          pending: false,
        })
        if (this.#live) this.#redraw()
        else this.#print('tool', `${s.cyan('▸')} ${this.#toolLabel(command.toolName, command.summary)}`)
        return
      case 'tool_progress': {
        const tool = this.#tools.get(command.toolCallId)
        if (tool) tool.progress = command.message
        this.#redraw()
        return
      }
      case 'tool_done': {
        this.#tools.delete(command.toolCallId)
        const ok = command.status === 'success'
        const mark = ok ? s.green('✓') : s.red('✗')
        const took = command.durationMs !== undefined ? s.dim(` (${formatDuration(command.durationMs)})`) : ''
        const preview = ok ? s.dim(`→ ${command.preview}`) : s.red(`→ ${command.preview}`)
        this.#print('tool', `${mark} ${this.#toolLabel(command.toolName, command.summary)}${took} ${preview}`)
        return
      }
      case 'todo_list':
        this.#print('tool', s.bold('Todos'), ...command.todos.map((todo) => this.#todoLine(todo)))
        return
      case 'usage':
        this.#print('meta', s.dim(`  ↳ ${usageLine(command.usage, command.costUsd, command.context)}`))
        return
      case 'task_end': {
        this.#tools.clear()
        this.#thinking = undefined
        this.#partial = ''
        const word = command.reason ? FINISHED[command.reason] : 'Done'
        const totals = command.metadata ? ` · ${taskSummaryLine(command.metadata)}` : ''
        this.#print('meta', s.dim(`■ ${word}${totals}`))
        return
      }
      case 'sub_agent_status': {
        const name = s.accent(command.color, command.name)
        const mark =
          command.tone === 'error' ? s.red(TONE.error) : s.accent(command.color, TONE[command.tone])
        this.#print('tool', `  ${s.gray('⎿')} ${name} ${mark} ${s.dim(command.text)}`)
        return
      }
      case 'notice':
        this.#print('meta', s.gray(command.text))
        return
      case 'error':
        this.#print(
          'meta',
          command.canRetry ? s.yellow(`↻ ${command.message}`) : s.red(`✗ Error: ${command.message}`),
        )
        return
      case 'interrupt':
        this.#tools.clear()
        this.#thinking = undefined
        this.#partial = ''
        this.#print('meta', s.yellow('⏹ Interrupted by user'))
        return
      case 'shutdown':
        this.clear()
        return
      default: {
        const unknown: never = command
        void unknown
      }
    }
  }

  /** Advances the spinners one frame and redraws (what the animation timer calls). */
  tick(): void {
    this.#frame = (this.#frame + 1) % SPINNER.length
    this.#redraw()
  }

  /** Empties the live area (before the prompt is shown) and stops the animation. */
  clear(): void {
    this.#tools.clear()
    this.#thinking = undefined
    this.#partial = ''
    this.#redraw()
  }

  /** Writes finished lines above the live area. */
  #print(block: Block, ...lines: string[]): void {
    this.#erase()
    // A blank line between blocks of different kinds (thinking, text, tool lines, meta lines).
    const gap = this.#lastBlock !== undefined && this.#lastBlock !== block && block !== 'meta' ? '\n' : ''
    this.#lastBlock = block
    this.#out.write(`${gap}${lines.join('\n')}\n`)
    this.#draw()
  }

  #toolLabel(name: string, summary: string): string {
    return summary ? `${this.#style.bold(name)} ${this.#style.dim(summary)}` : this.#style.bold(name)
  }

  #todoLine(todo: TodoItem): string {
    const s = this.#style
    const mark = TODO_MARK[todo.status] ?? '?'
    if (todo.status === 'completed') return `  ${s.green(mark)} ${s.dim(todo.content)}`
    if (todo.status === 'in_progress') return `  ${s.yellow(mark)} ${s.bold(todo.activeForm ?? todo.content)}`
    return `  ${mark} ${todo.content}`
  }

  #redraw(): void {
    this.#erase()
    this.#draw()
  }

  #erase(): void {
    if (this.#drawnRows === 0) return
    this.#out.write(`\x1b[${this.#drawnRows}A\r\x1b[J`)
    this.#drawnRows = 0
  }

  #draw(): void {
    if (!this.#live) return
    const lines = this.#liveLines()
    this.#syncTimer(lines.length > 0)
    if (lines.length === 0) return
    this.#out.write(`${lines.join('\n')}\n`)
    this.#drawnRows = lines.length
  }

  /**
   * The live area, each line cut to the width so that it takes exactly one row (its tabs made
   * spaces first, so that they are counted): the erase before a redraw moves up one row a line.
   */
  #liveLines(): string[] {
    const s = this.#style
    const width = Math.max(20, this.#out.columns - 1)
    const spinner = s.cyan(SPINNER[this.#frame]!)
    const lines: string[] = []
    if (this.#thinking !== undefined) {
      lines.push(`${spinner} ${s.dim('Thinking…')}`)
      const recent = this.#thinking.split('\n').filter((line) => line.trim() !== '')
      for (const line of recent.slice(-THINKING_PREVIEW_LINES))
        lines.push(s.dim(`  ${truncateToWidth(expandTabs(line.trim()), width - 2)}`))
    }
    if (this.#partial !== '') lines.push(tail(expandTabs(this.#partial), width))
    for (const tool of this.#tools.values()) {
      const detail = tool.progress ?? tool.summary
      const text = truncateToWidth(
        expandTabs(`${tool.name} ${detail}${tool.pending ? '…' : ''}`.trim()),
        width - 2,
      )
      lines.push(
        `${spinner} ${s.bold(text.slice(0, tool.name.length))}${s.dim(text.slice(tool.name.length))}`,
      )
    }
    return lines
  }

  #syncTimer(spinning: boolean): void {
    if (spinning && this.#animate && !this.#timer) {
      this.#timer = setInterval(() => this.tick(), 100)
      this.#timer.unref?.()
    } else if (!spinning && this.#timer) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }
}

/** The end of an open line that is wider than the terminal, so the newest text stays in view. */
function tail(text: string, width: number): string {
  if (visibleWidth(text) <= width) return text
  const chars = [...text]
  let out = ''
  let used = 1
  for (let i = chars.length - 1; i >= 0; i--) {
    const w = visibleWidth(chars[i]!)
    if (used + w > width) break
    out = chars[i] + out
    used += w
  }
  return `…${out}`
}

/** A copy of `value` whose strings are {@link terminalSafe}: model and tool text must not drive the terminal. */
export function withoutControls<T>(value: T): T {
  if (typeof value === 'string') return terminalSafe(value) as T
  if (Array.isArray(value)) return value.map(withoutControls) as T
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = {}
    for (const [key, field] of Object.entries(value)) copy[key] = withoutControls(field)
    return copy as T
  }
  return value
}
