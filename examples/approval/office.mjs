// The office's handler (docs/handler-api.md): records expenses, sends approval links, asks for
// payouts. A real one would write to a database, mail the manager and call a payment provider;
// this one logs what it would do, so `sagaway start` shows the links to click.

// the address the links are sent with: the gateway's public one
const PUBLIC_URL = process.env.PUBLIC_URL ?? 'http://localhost:8080';

export default {
  name: 'office',
  actions: {
    Submit: {
      0: async (input, ctx) => {
        const { id, amount } = input.parameters;
        ctx.log.info({ expense: id, amount }, 'expense submitted');
        return { id, amount, submittedBy: ctx.user?.sub ?? null };
      },
    },
    // the compensation of Submit: runs when the expense is rejected, expires or is not paid
    Withdraw: {
      0: async (input, ctx) => {
        ctx.log.info({ expense: input.parameters.id }, 'expense withdrawn');
        return {};
      },
    },
    // the wait's notify event: its payload has wait.callbacks, the links a manager clicks
    SendApprovalLink: {
      0: async (input, ctx) => {
        const links = input.wait.callbacks;
        ctx.log.info(
          {
            expense: input.parameters.id,
            approve: PUBLIC_URL + links.approve,
            reject: PUBLIC_URL + links.reject,
            until: input.wait.until,
          },
          'approval link (a real handler would mail it to a manager)',
        );
        return {};
      },
    },
    RequestPayout: {
      0: async (input, ctx) => {
        ctx.log.info({ expense: input.parameters.id }, 'payout requested; waiting for the payment webhook');
        return { requested: true };
      },
    },
  },
};
