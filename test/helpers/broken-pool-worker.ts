// A pool worker script that cannot even load (as a damaged or half-written bundle would): the pool must
// report the failure instead of leaving the main thread waiting.
throw new Error('this worker script is broken');
