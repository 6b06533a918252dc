import type {
  AssistantMessage,
  DeveloperMessage,
  Message,
  SystemMessage,
  ToolResultMessage,
  UserMessage,
} from '@kode/protocol'
import { toProviderMessages } from '@kode/protocol/helpers'
import type { LLMRequest } from '../../types.js'
import { checkMessages } from './check-messages.js'
import { type ImageFiles, readImageFiles } from './images.js'

/** A message as the provider will see it, with the developer messages folded into it. */
export type ViewEntry =
  | { role: 'user'; message: UserMessage | DeveloperMessage; appended: DeveloperMessage[] }
  | { role: 'tool'; message: ToolResultMessage; appended: DeveloperMessage[] }
  | { role: 'assistant'; message: AssistantMessage }

/** A request's messages in the shape every wire shares; an adapter converts each entry. */
export interface PreparedMessages {
  /** System prompt pieces in order: `request.system`, then the text of the latest system message. */
  system: string[]
  entries: ViewEntry[]
  /** The `image_file` parts of the messages, read into data URLs (see `imageUrlOf`). */
  files: ImageFiles
  /**
   * From `MessagePreparer`: how many of the entries are settled (made the same for every later
   * request that continues this history), and a token that stays the same object while the
   * client's requests continue one history. See `SettledItems`.
   */
  settled?: { readonly history: object; readonly count: number }
}

/** Options of {@link prepareMessages}. */
export interface PrepareMessagesOptions {
  /** The client's `readImageFile`; without it, a message holding an image file fails the request. */
  readImageFile?: ((path: string) => Promise<Uint8Array>) | undefined
  /**
   * Messages whose conversion the adapter has cached already (see `MessageCache`): their image
   * files are not read again.
   */
  converted?: (message: Message) => boolean
}

/**
 * What every message mapping starts from. Applies `toProviderMessages` from
 * `@kode/protocol/helpers` (the rules every wire and the agent engine share: the latest system
 * message, tool results paired with their calls, synthetic results for missing ones, orphan
 * results dropped), then:
 * - the system message's text joins `request.system` as system prompt pieces;
 * - a developer message is appended to the immediately preceding user or tool message (or stands
 *   as a user message of its own when none precedes it);
 * - the image files of the messages still to convert are read, in parallel, through
 *   `readImageFile` (fails with `invalid_request` when one cannot be read).
 * Entries keep the original message objects, so adapters can cache conversions per message.
 */
export async function prepareMessages(
  request: LLMRequest,
  options: PrepareMessagesOptions = {},
): Promise<PreparedMessages> {
  checkMessages(request.messages)
  const messages = toProviderMessages(request.messages)
  const files = await readImageFiles(messages, options.converted ?? (() => false), options.readImageFile)
  const { entries, system } = viewEntries(messages)
  return { system: systemPieces(request, system), entries, files }
}

/** The system prompt pieces: `request.system`, then the text of the latest system message. */
export function systemPieces(request: LLMRequest, system: SystemMessage | undefined): string[] {
  const pieces: string[] = []
  if (request.system) pieces.push(request.system)
  const text = system?.parts.map((p) => p.text).join('\n\n')
  if (text) pieces.push(text)
  return pieces
}

/**
 * The entries of provider messages (the output of `toProviderMessages`), developer messages folded
 * in, and the latest system message. Folding is local: a user or assistant message starts an entry
 * that nothing before it changes, so the entries of a history are those of its part before such a
 * message followed by those of the rest.
 */
export function viewEntries(messages: readonly Message[]): {
  entries: ViewEntry[]
  system: SystemMessage | undefined
} {
  let system: SystemMessage | undefined
  const entries: ViewEntry[] = []
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        system = message
        break
      case 'developer': {
        const last = entries[entries.length - 1]
        if (last && last.role !== 'assistant') last.appended.push(message)
        else entries.push({ role: 'user', message, appended: [] })
        break
      }
      case 'user':
        entries.push({ role: 'user', message, appended: [] })
        break
      case 'tool':
        entries.push({ role: 'tool', message, appended: [] })
        break
      case 'assistant':
        entries.push({ role: 'assistant', message })
        break
      default: {
        const unknown: never = message
        throw new TypeError(`unknown message role ${JSON.stringify((unknown as Message).role)}`)
      }
    }
  }
  return { entries, system }
}
