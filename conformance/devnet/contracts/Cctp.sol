// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// The relay devnet's CCTP-v2-style burn-and-mint: a TokenMessenger that burns on the source
// chain and mints on the destination chain, and a MessageTransmitter that emits and receives
// attested messages. The project's own code; it follows the public CCTP v2 message format so
// that an attestation simulator can serve the Circle API shape.
//
// Circle domain ids of the covered chains: Ethereum(1)=0, Avalanche(43114)=1, OP(10)=2,
// Arbitrum(42161)=3, Base(8453)=6, Polygon(137)=7, Unichain(130)=10.
//
// Message layout (abi.encodePacked, big-endian), message version 1:
//   field                       bytes  type     offset
//   version                     4      uint32   0
//   sourceDomain                4      uint32   4
//   destinationDomain           4      uint32   8
//   nonce                       32     bytes32  12
//   sender                      32     bytes32  44    (source TokenMessenger)
//   recipient                   32     bytes32  76    (destination TokenMessenger)
//   destinationCaller           32     bytes32  108   (0 = anyone may receive)
//   minFinalityThreshold        4      uint32   140
//   finalityThresholdExecuted   4      uint32   144
//   messageBody                 dyn    bytes    148
//
// Burn message body layout, body version 1:
//   version                     4      uint32   0
//   burnToken                   32     bytes32  4     (source-chain token)
//   mintRecipient               32     bytes32  36
//   amount                      32     uint256  68
//   messageSender               32     bytes32  100   (depositor on the source chain)
//   maxFee                      32     uint256  132
//   feeExecuted                 32     uint256  164
//   expirationBlock             32     uint256  196   (0 = never expires)
//   hookData                    dyn    bytes    228
//
// Devnet differences from Circle's contracts: the nonce is assigned on chain (keccak of
// source domain, transmitter and a counter) rather than by the attestation service,
// finalityThresholdExecuted is emitted as 2000 (devnet chains finalize at once) and
// feeExecuted as 0; an attester may rewrite those two fields before signing, as Circle does.
// The attestation is ONE 65-byte ECDSA signature by the configured attester over
// keccak256(message) (no EIP-191 prefix). Only the local TokenMessenger may send messages.

interface IBurnMintToken {
    function transferFrom(address from, address to, uint256 value) external returns (bool);
    function burn(uint256 value) external;
    function mint(address to, uint256 value) external;
}

interface IMessageHandler {
    function handleReceiveFinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);

    function handleReceiveUnfinalizedMessage(
        uint32 remoteDomain,
        bytes32 sender,
        uint32 finalityThresholdExecuted,
        bytes calldata messageBody
    ) external returns (bool);
}

abstract contract Owned {
    error NotOwner();

    address public owner;

    constructor() {
        owner = msg.sender;
    }

    modifier onlyOwner() {
        if (msg.sender != owner) revert NotOwner();
        _;
    }

    function transferOwnership(address newOwner) external onlyOwner {
        owner = newOwner;
    }
}

contract MessageTransmitter is Owned {
    error NotTokenMessenger();
    error InvalidAttestationLength();
    error InvalidAttestation();
    error InvalidMessage();
    error InvalidMessageVersion(uint32 version);
    error InvalidDestinationDomain(uint32 destinationDomain);
    error InvalidCaller();
    error NonceAlreadyUsed(bytes32 nonce);
    error HandlerFailed();

    event MessageSent(bytes message);
    event MessageReceived(
        address indexed caller,
        uint32 sourceDomain,
        bytes32 indexed nonce,
        bytes32 sender,
        uint32 indexed finalityThresholdExecuted,
        bytes messageBody
    );
    event AttesterChanged(address attester);

    uint32 public constant version = 1;
    uint32 public constant FINALITY_FINALIZED = 2000;
    uint256 private constant HEADER_LENGTH = 148;
    uint256 private constant S_UPPER_BOUND = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    uint32 public immutable localDomain;
    address public attester;
    address public tokenMessenger;
    uint256 public sentMessages;
    /// nonce => 1 once a message with that nonce was received.
    mapping(bytes32 => uint256) public usedNonces;

    constructor(uint32 localDomain_, address attester_) {
        localDomain = localDomain_;
        attester = attester_;
    }

    function setAttester(address attester_) external onlyOwner {
        attester = attester_;
        emit AttesterChanged(attester_);
    }

    function setTokenMessenger(address tokenMessenger_) external onlyOwner {
        tokenMessenger = tokenMessenger_;
    }

    /// Emits MessageSent with a fresh nonce; only the local TokenMessenger may call it.
    function sendMessage(
        uint32 destinationDomain,
        bytes32 recipient,
        bytes32 destinationCaller,
        uint32 minFinalityThreshold,
        bytes calldata messageBody
    ) external {
        if (msg.sender != tokenMessenger) revert NotTokenMessenger();
        bytes32 nonce = keccak256(abi.encode(localDomain, address(this), ++sentMessages));
        bytes memory message = abi.encodePacked(
            version,
            localDomain,
            destinationDomain,
            nonce,
            bytes32(uint256(uint160(msg.sender))),
            recipient,
            destinationCaller,
            minFinalityThreshold,
            FINALITY_FINALIZED,
            messageBody
        );
        emit MessageSent(message);
    }

    /// Verifies the attester's signature over keccak256(message) and delivers the body to the
    /// recipient's handler, once per nonce.
    function receiveMessage(bytes calldata message, bytes calldata attestation) external returns (bool) {
        _verifyAttestation(keccak256(message), attestation);
        if (message.length < HEADER_LENGTH) revert InvalidMessage();
        uint32 msgVersion = uint32(bytes4(message[0:4]));
        if (msgVersion != version) revert InvalidMessageVersion(msgVersion);
        uint32 sourceDomain = uint32(bytes4(message[4:8]));
        uint32 destinationDomain = uint32(bytes4(message[8:12]));
        if (destinationDomain != localDomain) revert InvalidDestinationDomain(destinationDomain);
        bytes32 destinationCaller = bytes32(message[108:140]);
        if (destinationCaller != bytes32(0) && destinationCaller != bytes32(uint256(uint160(msg.sender)))) {
            revert InvalidCaller();
        }
        bytes32 nonce = bytes32(message[12:44]);
        if (usedNonces[nonce] != 0) revert NonceAlreadyUsed(nonce);
        usedNonces[nonce] = 1;

        bytes32 sender = bytes32(message[44:76]);
        address recipient = address(uint160(uint256(bytes32(message[76:108]))));
        uint32 executed = uint32(bytes4(message[144:148]));
        bytes calldata body = message[HEADER_LENGTH:];
        bool ok = executed >= FINALITY_FINALIZED
            ? IMessageHandler(recipient).handleReceiveFinalizedMessage(sourceDomain, sender, executed, body)
            : IMessageHandler(recipient).handleReceiveUnfinalizedMessage(sourceDomain, sender, executed, body);
        if (!ok) revert HandlerFailed();
        emit MessageReceived(msg.sender, sourceDomain, nonce, sender, executed, body);
        return true;
    }

    function _verifyAttestation(bytes32 digest, bytes calldata attestation) private view {
        if (attestation.length != 65) revert InvalidAttestationLength();
        bytes32 r = bytes32(attestation[0:32]);
        bytes32 s = bytes32(attestation[32:64]);
        uint8 v = uint8(attestation[64]);
        if (uint256(s) > S_UPPER_BOUND) revert InvalidAttestation();
        address signer = ecrecover(digest, v, r, s);
        if (signer == address(0) || signer != attester) revert InvalidAttestation();
    }
}

contract TokenMessenger is Owned, IMessageHandler {
    error InvalidAmount();
    error InvalidMintRecipient();
    error InvalidFee(uint256 fee, uint256 amount);
    error UnknownDestinationDomain(uint32 domain);
    error NotMessageTransmitter();
    error UnknownRemoteTokenMessenger(uint32 domain, bytes32 sender);
    error UnsupportedRemoteToken(uint32 domain, bytes32 token);
    error InvalidMessageBody();
    error MessageExpired(uint256 expirationBlock);
    error TransferFailed();

    event DepositForBurn(
        address indexed burnToken,
        uint256 amount,
        address indexed depositor,
        bytes32 mintRecipient,
        uint32 destinationDomain,
        bytes32 destinationTokenMessenger,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 indexed minFinalityThreshold,
        bytes hookData
    );
    event MintAndWithdraw(address indexed mintRecipient, uint256 amount, address indexed mintToken, uint256 feeCollected);
    event TokenLinked(uint32 remoteDomain, bytes32 remoteToken, address localToken);
    event RemoteTokenMessengerAdded(uint32 domain, bytes32 tokenMessenger);

    uint32 public constant messageBodyVersion = 1;
    uint256 private constant BODY_HEADER_LENGTH = 228;

    MessageTransmitter public immutable localMessageTransmitter;
    uint32 public immutable localDomain;
    address public feeRecipient;
    /// remote domain => TokenMessenger on that domain (left-padded address).
    mapping(uint32 => bytes32) public remoteTokenMessengers;
    mapping(bytes32 => address) private localTokens;

    constructor(MessageTransmitter transmitter) {
        localMessageTransmitter = transmitter;
        localDomain = transmitter.localDomain();
        feeRecipient = msg.sender;
    }

    function setFeeRecipient(address feeRecipient_) external onlyOwner {
        feeRecipient = feeRecipient_;
    }

    function addRemoteTokenMessenger(uint32 domain, bytes32 tokenMessenger) external onlyOwner {
        remoteTokenMessengers[domain] = tokenMessenger;
        emit RemoteTokenMessengerAdded(domain, tokenMessenger);
    }

    /// Maps a token on a remote domain to the local token minted when it is burned there.
    function linkToken(uint32 remoteDomain, bytes32 remoteToken, address localToken) external onlyOwner {
        localTokens[keccak256(abi.encodePacked(remoteDomain, remoteToken))] = localToken;
        emit TokenLinked(remoteDomain, remoteToken, localToken);
    }

    function getLocalToken(uint32 remoteDomain, bytes32 remoteToken) public view returns (address) {
        return localTokens[keccak256(abi.encodePacked(remoteDomain, remoteToken))];
    }

    function depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold
    ) external {
        _depositForBurn(
            amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, ""
        );
    }

    function depositForBurnWithHook(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes calldata hookData
    ) external {
        _depositForBurn(
            amount, destinationDomain, mintRecipient, burnToken, destinationCaller, maxFee, minFinalityThreshold, hookData
        );
    }

    function handleReceiveFinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32, bytes calldata messageBody)
        external
        returns (bool)
    {
        return _mintFromMessage(remoteDomain, sender, messageBody);
    }

    function handleReceiveUnfinalizedMessage(uint32 remoteDomain, bytes32 sender, uint32, bytes calldata messageBody)
        external
        returns (bool)
    {
        return _mintFromMessage(remoteDomain, sender, messageBody);
    }

    function _depositForBurn(
        uint256 amount,
        uint32 destinationDomain,
        bytes32 mintRecipient,
        address burnToken,
        bytes32 destinationCaller,
        uint256 maxFee,
        uint32 minFinalityThreshold,
        bytes memory hookData
    ) private {
        if (amount == 0) revert InvalidAmount();
        if (mintRecipient == bytes32(0)) revert InvalidMintRecipient();
        if (maxFee >= amount) revert InvalidFee(maxFee, amount);
        bytes32 destinationMessenger = remoteTokenMessengers[destinationDomain];
        if (destinationMessenger == bytes32(0)) revert UnknownDestinationDomain(destinationDomain);

        if (!IBurnMintToken(burnToken).transferFrom(msg.sender, address(this), amount)) revert TransferFailed();
        IBurnMintToken(burnToken).burn(amount);

        bytes memory body = abi.encodePacked(
            messageBodyVersion,
            bytes32(uint256(uint160(burnToken))),
            mintRecipient,
            amount,
            bytes32(uint256(uint160(msg.sender))),
            maxFee,
            uint256(0), // feeExecuted: filled by the attester, if at all
            uint256(0), // expirationBlock: never
            hookData
        );
        localMessageTransmitter.sendMessage(
            destinationDomain, destinationMessenger, destinationCaller, minFinalityThreshold, body
        );
        emit DepositForBurn(
            burnToken,
            amount,
            msg.sender,
            mintRecipient,
            destinationDomain,
            destinationMessenger,
            destinationCaller,
            maxFee,
            minFinalityThreshold,
            hookData
        );
    }

    function _mintFromMessage(uint32 remoteDomain, bytes32 sender, bytes calldata body) private returns (bool) {
        if (msg.sender != address(localMessageTransmitter)) revert NotMessageTransmitter();
        if (sender == bytes32(0) || remoteTokenMessengers[remoteDomain] != sender) {
            revert UnknownRemoteTokenMessenger(remoteDomain, sender);
        }
        if (body.length < BODY_HEADER_LENGTH || uint32(bytes4(body[0:4])) != messageBodyVersion) {
            revert InvalidMessageBody();
        }
        bytes32 burnToken = bytes32(body[4:36]);
        address mintRecipient = address(uint160(uint256(bytes32(body[36:68]))));
        uint256 amount = uint256(bytes32(body[68:100]));
        uint256 maxFee = uint256(bytes32(body[132:164]));
        uint256 feeExecuted = uint256(bytes32(body[164:196]));
        uint256 expirationBlock = uint256(bytes32(body[196:228]));
        if (expirationBlock != 0 && block.number >= expirationBlock) revert MessageExpired(expirationBlock);
        if (feeExecuted > maxFee || feeExecuted >= amount) revert InvalidFee(feeExecuted, amount);

        address localToken = getLocalToken(remoteDomain, burnToken);
        if (localToken == address(0)) revert UnsupportedRemoteToken(remoteDomain, burnToken);
        IBurnMintToken(localToken).mint(mintRecipient, amount - feeExecuted);
        if (feeExecuted != 0) IBurnMintToken(localToken).mint(feeRecipient, feeExecuted);
        emit MintAndWithdraw(mintRecipient, amount - feeExecuted, localToken, feeExecuted);
        return true;
    }
}
