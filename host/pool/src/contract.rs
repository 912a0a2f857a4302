//! The pool contract as the host calls it (`PrivacyPool.sol` in the
//! devnet's contracts): its figures, its tree, its spent nullifiers and
//! known roots, and `withdraw`.

#![allow(missing_docs)]

alloy::sol! {
    /// BETA AND UNAUDITED: the privacy pool.
    #[derive(Debug, PartialEq, Eq)]
    #[sol(rpc)]
    interface PrivacyPool {
        function denomination() external view returns (uint256);
        function cap() external view returns (uint256);
        function nextIndex() external view returns (uint256);
        function EXTERNAL_NULLIFIER() external view returns (uint256);
        function knownRoots(uint256 root) external view returns (bool);
        function nullifierSpent(uint256 nullifierHash) external view returns (bool);
        function snapshot(uint256 start) external view returns (uint256 root_, uint256[] memory fresh);
        function deposit(uint256 commitment) external payable;
        function withdraw(
            uint256[8] calldata proof,
            uint256 root_,
            uint256 nullifierHash,
            address recipient,
            address relayer,
            uint256 fee
        ) external;

        event Deposit(uint256 indexed commitment, uint256 leafIndex, uint256 root);
        event Withdrawal(address indexed recipient, address indexed relayer, uint256 nullifierHash, uint256 fee);

        error WrongDenomination(uint256 sent, uint256 wanted);
        error PoolFull(uint256 cap);
        error InvalidCommitment();
        error DuplicateCommitment();
        error UnknownRoot();
        error NullifierSpent();
        error FeeTooHigh();
        error InvalidProof();
        error PaymentFailed();
    }
}
