import type { Message } from '@kode/protocol'

/**
 * Per-client memo of wire conversions, keyed by message object. History messages are immutable
 * once written, so a long session converts each message once instead of on every turn. Entries
 * go away with their messages (a WeakMap).
 */
export class MessageCache<W> {
  private readonly map = new WeakMap<Message, W>()

  has(message: Message): boolean {
    return this.map.has(message)
  }

  /** The cached conversion of `message`, converting it now if needed. */
  get<M extends Message>(message: M, convert: (message: M) => W): W {
    let wire = this.map.get(message)
    if (wire === undefined) {
      wire = convert(message)
      this.map.set(message, wire)
    }
    return wire
  }
}
