//! x402's `errorCode`s (spec §4.8, §7): what a paying endpoint answers
//! about its payment — every paid feature (sponsorships, paid names) the
//! same. The x402 feature ([`crate::http::feature`]) lists them in the
//! host's catalogue once.

relay_errors::error_codes! { pub ALL;
    /// No payment: the 402 body is the invoice.
    PaymentRequired => ("PAYMENT_REQUIRED", PAYMENT_REQUIRED, false, "pay the invoice: send an x402 payment (X-PAYMENT v1 or PAYMENT-SIGNATURE v2) for one of accepts[]", State),
    /// The payment is malformed or is not for this invoice (network, scheme, signature, payTo).
    PaymentInvalid => ("PAYMENT_INVALID", PAYMENT_REQUIRED, false, "the x402 payment is malformed or does not pay this invoice (scheme exact, network, payTo, a signature by `from`); the message names what", Input),
    /// The payment is for less than the invoice.
    PaymentInsufficient => ("PAYMENT_INSUFFICIENT", PAYMENT_REQUIRED, false, "the payment's value is below the invoice's maxAmountRequired; pay the invoice the 402 carries", Input),
    /// The payment is outside its validity window.
    PaymentExpired => ("PAYMENT_EXPIRED", PAYMENT_REQUIRED, false, "the payment is not valid now (validAfter/validBefore, with a few seconds to settle); sign a fresh one", Input),
    /// The payer cannot pay (balance short, or the settlement would revert).
    PaymentUnfunded => ("PAYMENT_UNFUNDED", PAYMENT_REQUIRED, false, "the payer's balance of the payment asset does not cover the payment, or its settlement would revert (simulated; nothing was sent); pay from a funded account", Input),
    /// The payment's nonce was used already.
    PaymentNonceUsed => ("PAYMENT_NONCE_USED", CONFLICT, false, "the payment's EIP-3009 nonce is already used (this payment was spent); sign a new payment", Input),
    /// The payment chain could not be read, or a paid order's step has no known outcome yet.
    PaymentChainUnavailable => ("PAYMENT_CHAIN_UNAVAILABLE", SERVICE_UNAVAILABLE, true, "the payment chain could not be read, or a step of the paid order has no known outcome yet; retry with the same x-idempotency-key (a paid order is never charged twice)", Host),
    /// A purchase of the same thing is being settled.
    OrderPending => ("ORDER_PENDING", CONFLICT, true, "another paid order for the same thing is being settled right now; retry in a few seconds (it may be gone by then)", State),
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_code_answers_as_its_blame_says() {
        for c in super::ALL {
            assert!(c.consistent(), "{}", c.as_str());
        }
        assert_eq!(super::PaymentRequired.status().as_u16(), 402);
    }
}
