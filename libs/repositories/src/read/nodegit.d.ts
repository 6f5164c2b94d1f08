declare module 'nodegit';
