// bullmq_run.js PORT - drives BullMQ (a Node job queue whose Lua scripts
// write every job event with XADD and whose QueueEvents waits with
// XREAD BLOCK) against the server on PORT: 20 jobs that succeed, one that
// fails, a worker, and the 'completed' events seen through QueueEvents.
// Prints one JSON line with what the queue ended up holding.
const { Queue, Worker, QueueEvents } = require('bullmq');
const connection = { host: '127.0.0.1', port: parseInt(process.argv[2], 10) };

async function main() {
  const name = 'ferry-test';
  const queue = new Queue(name, { connection });
  await queue.obliterate({ force: true }).catch(() => {});
  const events = new QueueEvents(name, { connection });
  await events.waitUntilReady();
  const seen = [];
  events.on('completed', ({ returnvalue }) => seen.push(Number(returnvalue)));
  for (let i = 0; i < 20; i++) await queue.add('sum', { a: i, b: 2 * i }, { attempts: 2 });
  await queue.add('bad', { fail: true });
  const worker = new Worker(name, async job => {
    if (job.data.fail) throw new Error('boom');
    return job.data.a + job.data.b;
  }, { connection });
  const t0 = Date.now();
  while (Date.now() - t0 < 20000) {
    const c = await queue.getJobCounts('completed', 'failed');
    if (c.completed === 20 && c.failed === 1 && seen.length === 20) break;
    await new Promise(r => setTimeout(r, 50));
  }
  const counts = await queue.getJobCounts('completed', 'failed', 'waiting', 'active', 'delayed');
  const values = (await queue.getJobs(['completed'])).map(j => j.returnvalue).sort((x, y) => x - y);
  const failed = (await queue.getJobs(['failed'])).map(j => [j.name, j.failedReason, j.attemptsMade]);
  const eventsLen = await queue.client.then(c => c.xlen(`bull:${name}:events`));
  console.log(JSON.stringify({ counts, values, failed, seen: seen.sort((x, y) => x - y),
                               eventsStreamNonEmpty: eventsLen > 0 }));
  await worker.close();
  await events.close();
  await queue.close();
}

main().then(() => process.exit(0), e => { console.error(e); process.exit(1); });
