import { afterEach, beforeEach, expect, test, vi } from 'vitest'
import { IdleWatchdog } from '../../src/transport/idle-watchdog.js'

beforeEach(() => vi.useFakeTimers())
afterEach(() => vi.useRealTimers())

test('fires once nothing touched it for the timeout', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  vi.advanceTimersByTime(600)
  dog.touch()
  vi.advanceTimersByTime(600)
  expect(onIdle).not.toHaveBeenCalled()
  vi.advanceTimersByTime(400)
  expect(onIdle).toHaveBeenCalledTimes(1)
})

test('does not fire after stop', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  dog.stop()
  vi.advanceTimersByTime(5_000)
  expect(onIdle).not.toHaveBeenCalled()
})

test('a zero timeout disables it', () => {
  const onIdle = vi.fn()
  new IdleWatchdog(0, onIdle).start()
  vi.advanceTimersByTime(60_000)
  expect(onIdle).not.toHaveBeenCalled()
})

test('while paused no idle time counts, however long the pause', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  vi.advanceTimersByTime(500)
  dog.pause()
  vi.advanceTimersByTime(10_000)
  expect(onIdle).not.toHaveBeenCalled()
})

test('after a pause, idle time counts from the resume', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  dog.pause()
  vi.advanceTimersByTime(5_000)
  dog.resume()
  vi.advanceTimersByTime(999)
  expect(onIdle).not.toHaveBeenCalled()
  vi.advanceTimersByTime(1)
  expect(onIdle).toHaveBeenCalledTimes(1)
})

test('resume after stop does not restart it', () => {
  const onIdle = vi.fn()
  const dog = new IdleWatchdog(1_000, onIdle)
  dog.start()
  dog.stop()
  dog.resume()
  vi.advanceTimersByTime(5_000)
  expect(onIdle).not.toHaveBeenCalled()
})
