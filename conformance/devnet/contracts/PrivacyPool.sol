// SPDX-License-Identifier: MIT
pragma solidity ^0.8.28;

import {PoseidonT3} from "poseidon-solidity/PoseidonT3.sol";

/// The Groth16 verifier of Semaphore's depth-20 circuit (`PoolVerifier.sol`, rendered from
/// snarkjs' own template with the verifying key semaphore-rs ships).
interface IPoolVerifier {
    function verifyProof(
        uint256[2] calldata a,
        uint256[2][2] calldata b,
        uint256[2] calldata c,
        uint256[4] calldata pubSignals
    ) external view returns (bool);
}

/// BETA AND UNAUDITED. The relay's privacy pool (spec §4.11, §8.2): fixed-denomination ETH
/// notes whose commitments are leaves of an incremental Poseidon Merkle tree (depth 20, the
/// prover's; empty leaves 0), at most `CAP` of them. A note is withdrawn once, to anyone, with
/// a Groth16 proof of Semaphore's circuit:
///   - the note is a Semaphore identity commitment in a tree whose root this pool has had;
///   - the nullifier hash is Poseidon(externalNullifier, identityNullifier), spent once;
///   - the external nullifier is this pool on this chain (`EXTERNAL_NULLIFIER`);
///   - the signal binds the recipient, the relayer and the fee, so whoever carries the proof
///     cannot redirect the payment or raise its fee.
/// Anyone may submit a withdrawal (the relayer does, so the withdrawer holds no gas); the
/// fee goes to the `relayer` the proof names, the rest of the note to the recipient.
contract PrivacyPool {
    /// The prover's tree depth.
    uint256 public constant DEPTH = 20;
    /// The scalar field of BN254: every leaf, root and signal is below it.
    uint256 internal constant FIELD =
        21888242871839275222246405745257275088548364400416034343698204186575808495617;

    /// The verifier of Semaphore's depth-20 circuit.
    IPoolVerifier public immutable verifier;
    /// Wei per note.
    uint256 public immutable denomination;
    /// The most notes the pool ever takes.
    uint256 public immutable cap;
    /// keccak256(chainid, this) >> 8: binds every proof to this pool on this chain.
    uint256 public immutable EXTERNAL_NULLIFIER;

    /// Leaves inserted so far (the next leaf's index).
    uint256 public nextIndex;
    /// The leaves (commitments), in insertion order.
    uint256[] internal leaves;
    /// The current root.
    uint256 public root;
    /// Every root the tree has had (at most `cap` + 1 of them).
    mapping(uint256 => bool) public knownRoots;
    /// Spent nullifier hashes.
    mapping(uint256 => bool) public nullifierSpent;
    /// Whether a commitment is in the tree (one note per commitment).
    mapping(uint256 => bool) public committed;

    uint256[DEPTH] internal zeros;
    uint256[DEPTH] internal filledSubtrees;

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

    constructor(IPoolVerifier verifier_, uint256 denomination_, uint256 cap_) {
        verifier = verifier_;
        denomination = denomination_;
        cap = cap_;
        EXTERNAL_NULLIFIER = uint256(keccak256(abi.encodePacked(block.chainid, address(this)))) >> 8;
        uint256 z = 0;
        for (uint256 i = 0; i < DEPTH; i++) {
            zeros[i] = z;
            filledSubtrees[i] = z;
            z = PoseidonT3.hash([z, z]);
        }
        root = z;
        knownRoots[z] = true;
    }

    /// Adds `commitment` (a Semaphore identity commitment) for exactly `denomination` wei.
    function deposit(uint256 commitment) external payable {
        if (msg.value != denomination) revert WrongDenomination(msg.value, denomination);
        if (nextIndex >= cap) revert PoolFull(cap);
        if (commitment == 0 || commitment >= FIELD) revert InvalidCommitment();
        if (committed[commitment]) revert DuplicateCommitment();
        committed[commitment] = true;
        uint256 index = nextIndex;
        uint256 node = commitment;
        for (uint256 i = 0; i < DEPTH; i++) {
            if ((index >> i) & 1 == 0) {
                filledSubtrees[i] = node;
                node = PoseidonT3.hash([node, zeros[i]]);
            } else {
                node = PoseidonT3.hash([filledSubtrees[i], node]);
            }
        }
        leaves.push(commitment);
        nextIndex = index + 1;
        root = node;
        knownRoots[node] = true;
        emit Deposit(commitment, index, node);
    }

    /// The root and the leaves from index `start` on, read at one block (the whole tree is at
    /// most `cap` leaves).
    function snapshot(uint256 start) external view returns (uint256 root_, uint256[] memory fresh) {
        root_ = root;
        uint256 n = leaves.length;
        if (start >= n) return (root_, fresh);
        fresh = new uint256[](n - start);
        for (uint256 i = start; i < n; i++) {
            fresh[i - start] = leaves[i];
        }
    }

    /// The signal a withdrawal's proof must carry: keccak256(recipient, relayer, fee) >> 8.
    function signalHash(address recipient, address relayer, uint256 fee) public pure returns (uint256) {
        return uint256(keccak256(abi.encodePacked(recipient, relayer, fee))) >> 8;
    }

    /// Pays a note out: `denomination - fee` to `recipient`, `fee` to `relayer`.
    function withdraw(
        uint256[8] calldata proof,
        uint256 root_,
        uint256 nullifierHash,
        address payable recipient,
        address payable relayer,
        uint256 fee
    ) external {
        if (fee > denomination) revert FeeTooHigh();
        if (!knownRoots[root_]) revert UnknownRoot();
        if (nullifierSpent[nullifierHash]) revert NullifierSpent();
        uint256[4] memory inputs = [root_, nullifierHash, signalHash(recipient, relayer, fee), EXTERNAL_NULLIFIER];
        bool ok = verifier.verifyProof(
            [proof[0], proof[1]], [[proof[2], proof[3]], [proof[4], proof[5]]], [proof[6], proof[7]], inputs
        );
        if (!ok) revert InvalidProof();
        nullifierSpent[nullifierHash] = true;
        emit Withdrawal(recipient, relayer, nullifierHash, fee);
        (bool paid,) = recipient.call{value: denomination - fee}("");
        if (!paid) revert PaymentFailed();
        if (fee > 0) {
            (bool feePaid,) = relayer.call{value: fee}("");
            if (!feePaid) revert PaymentFailed();
        }
    }
}
