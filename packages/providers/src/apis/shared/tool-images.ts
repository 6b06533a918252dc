import type { ImagePart, ToolResultMessage } from '@kode/protocol'
import type { ViewEntry } from './prepare-messages.js'

/**
 * A tool result's images for a wire whose tool messages carry text only (Chat Completions,
 * Responses): a line naming the tool and call, then the images, as that wire's content parts.
 * Empty when the result has no images.
 */
export function toolImageContent<C>(
  message: ToolResultMessage,
  callId: string,
  content: { text(text: string): C; image(part: ImagePart): C },
): C[] {
  if (message.parts.length === 0) return []
  const out = [content.text(`Images returned by tool ${message.toolName} (${callId}):`)]
  for (const part of message.parts) out.push(content.image(part))
  return out
}

/**
 * The images of a run of tool results, held back until the run ends and then sent as one user
 * message: on these wires a user message between two tool results would break the run the API
 * expects after an assistant message's tool calls. Developer images folded into a tool result
 * join the same message.
 */
export class ToolImageRun<C> {
  private pending: C[] = []

  /** `emit` receives each finished run's images, to push as a user message. */
  constructor(private readonly emit: (content: C[]) => void) {}

  /** Call before each entry of the view: any entry but a tool result ends the run. */
  next(entry: ViewEntry): void {
    if (entry.role !== 'tool') this.end()
  }

  add(content: readonly C[]): void {
    for (const part of content) this.pending.push(part)
  }

  /** Ends the run (also after the last entry): its images, if any, become one user message. */
  end(): void {
    if (this.pending.length === 0) return
    this.emit(this.pending)
    this.pending = []
  }
}
