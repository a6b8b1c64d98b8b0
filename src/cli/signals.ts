/** The long-running commands' stop signal: handlers are installed at once, so SIGTERM during startup still drains and exits 0. */
export function untilStopSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const on = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', on);
      process.off('SIGTERM', on);
      resolve(signal);
    };
    process.on('SIGINT', on);
    process.on('SIGTERM', on);
  });
}

/** After a clean shutdown: should a library keep a handle open (a hung connect to the API server), don't let it hold the exit. */
export function exitSoon(code: number): void {
  setTimeout(() => process.exit(code), 2000).unref();
}
