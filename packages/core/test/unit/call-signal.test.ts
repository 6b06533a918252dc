import { describe, expect, test } from 'vitest'
import { CallSignal } from '../../src/tools/call-signal.js'

const timeout = () => new DOMException('tool t timed out', 'TimeoutError')

describe("a tool call's signal, made when first read", () => {
  test('read at once: aborts with the task while the call runs, not after it ended', () => {
    const task = new AbortController()
    const call = new CallSignal(task.signal)
    const signal = call.signal
    expect(signal.aborted).toBe(false)
    expect(call.signal).toBe(signal)
    task.abort('stop')
    expect(signal.reason).toBe('stop')

    const later = new AbortController()
    const ended = new CallSignal(later.signal)
    const own = ended.signal
    ended.end()
    later.abort('too late')
    expect(own.aborted).toBe(false)
  })

  test('read late: shows what happened while the call ran', () => {
    const task = new AbortController()
    const aborted = new CallSignal(task.signal)
    task.abort('stop')
    expect(aborted.signal.reason).toBe('stop')

    const finished = new AbortController()
    const calm = new CallSignal(finished.signal)
    calm.end()
    finished.abort('after the call')
    expect(calm.signal.aborted).toBe(false)

    const during = new AbortController()
    const ran = new CallSignal(during.signal)
    during.abort('during')
    ran.end()
    expect(ran.signal.reason).toBe('during')
  })

  test('a timeout aborts with its own reason, unless the task aborted first', () => {
    const task = new AbortController()
    const unread = new CallSignal(task.signal)
    const reason = timeout()
    unread.abort(reason)
    task.abort('stop')
    expect(unread.signal.reason).toBe(reason)
    expect(unread.timeout).toBe(reason)

    const read = new CallSignal(new AbortController().signal)
    const signal = read.signal
    expect(read.timeout).toBeUndefined()
    read.abort(reason)
    expect(signal.reason).toBe(reason)
    expect(read.timeout).toBe(reason)

    // The call was interrupted, not timed out: `timeout` says so.
    const first = new AbortController()
    const both = new CallSignal(first.signal)
    first.abort('stop')
    both.abort(timeout())
    expect(both.signal.reason).toBe('stop')
    expect(both.timeout).toBeUndefined()
    const readFirst = new AbortController()
    const readBoth = new CallSignal(readFirst.signal)
    void readBoth.signal
    readFirst.abort('stop')
    readBoth.abort(timeout())
    expect(readBoth.timeout).toBeUndefined()
  })

  test('an already aborted task gives an aborted signal; no listener is left on the task', () => {
    const task = new AbortController()
    task.abort('before')
    expect(new CallSignal(task.signal).signal.reason).toBe('before')

    const live = new AbortController()
    let listeners = 0
    const add = live.signal.addEventListener.bind(live.signal)
    const remove = live.signal.removeEventListener.bind(live.signal)
    live.signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      listeners++
      add(...args)
    }
    live.signal.removeEventListener = (...args: Parameters<AbortSignal['removeEventListener']>) => {
      listeners--
      remove(...args)
    }
    const unread = new CallSignal(live.signal)
    unread.end()
    expect(listeners).toBe(0)
    const read = new CallSignal(live.signal)
    void read.signal
    expect(listeners).toBe(1)
    read.end()
    expect(listeners).toBe(0)
  })
})
