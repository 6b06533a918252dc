import { describe, expect, test } from 'vitest'
import { AbortListeners } from '../../src/task/abort-listeners.js'

describe("listeners on the task's signal through one listener", () => {
  test('each listener added and not deleted runs once, in the order added, after earlier listeners', () => {
    const controller = new AbortController()
    const order: string[] = []
    controller.signal.addEventListener('abort', () => order.push('signal'))
    const listeners = new AbortListeners(controller.signal)
    const first = () => order.push('first')
    const gone = () => order.push('gone')
    const second = () => order.push('second')
    listeners.add(first)
    listeners.add(gone)
    listeners.add(second)
    listeners.delete(gone)
    controller.abort()
    controller.abort()
    expect(order).toEqual(['signal', 'first', 'second'])
  })

  test('one listener is added to the signal, however many come and go', () => {
    const controller = new AbortController()
    let added = 0
    const signal = controller.signal
    const add = signal.addEventListener.bind(signal)
    signal.addEventListener = (...args: Parameters<AbortSignal['addEventListener']>) => {
      added++
      add(...args)
    }
    const listeners = new AbortListeners(signal)
    let ran = 0
    for (let i = 0; i < 50; i++) {
      const listener = () => ran++
      listeners.add(listener)
      listeners.delete(listener)
    }
    const kept = () => ran++
    listeners.add(kept)
    controller.abort()
    expect(added).toBe(1)
    expect(ran).toBe(1)
  })

  test('a listener added after the abort does not run, as with the signal itself', () => {
    const controller = new AbortController()
    const listeners = new AbortListeners(controller.signal)
    let ran = 0
    listeners.add(() => ran++)
    controller.abort()
    listeners.add(() => ran++)
    expect(ran).toBe(1)
  })

  test('a listener that throws does not keep the others from running; the error is reported as uncaught', async () => {
    const controller = new AbortController()
    const listeners = new AbortListeners(controller.signal)
    const ran: string[] = []
    const boom = new Error('listener bug')
    const uncaught: unknown[] = []
    const onUncaught = (error: unknown) => uncaught.push(error)
    const previous = process.listeners('uncaughtException')
    process.removeAllListeners('uncaughtException')
    process.on('uncaughtException', onUncaught)
    try {
      listeners.add(() => {
        throw boom
      })
      listeners.add(() => ran.push('after'))
      controller.abort()
      expect(ran).toEqual(['after'])
      await new Promise((resolve) => setTimeout(resolve, 0))
      expect(uncaught).toEqual([boom])
    } finally {
      process.removeListener('uncaughtException', onUncaught)
      for (const listener of previous) process.on('uncaughtException', listener)
    }
  })
})
