import 'reflect-metadata';

/** The worker alone (outbox relay and BullMQ processors), for deployments that run it apart. */
process.env.LODE_ROLE = 'worker';
void import('../../api/src/main.js');
