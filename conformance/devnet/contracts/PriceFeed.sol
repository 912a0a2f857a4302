// SPDX-License-Identifier: Apache-2.0
pragma solidity 0.8.28;

// DEVNET ONLY: a Chainlink-style price feed. It answers AggregatorV3Interface (decimals,
// description, version, latestRoundData, getRoundData) like a Chainlink aggregator, and
// its deployer moves the price with `updateAnswer`, which starts a new round and emits
// Chainlink's `AnswerUpdated`. Real feeds are updated by their oracle network instead.

contract PriceFeed {
    error NotOwner();
    error NoDataPresent();

    event AnswerUpdated(int256 indexed current, uint256 indexed roundId, uint256 updatedAt);
    event NewRound(uint256 indexed roundId, address indexed startedBy, uint256 startedAt);

    struct Round {
        int256 answer;
        uint256 startedAt;
        uint256 updatedAt;
    }

    uint8 public immutable decimals;
    string public description;
    uint256 public constant version = 4;
    address public immutable owner;
    uint80 public latestRound;

    mapping(uint80 => Round) private rounds;

    constructor(uint8 decimals_, string memory description_, int256 initialAnswer) {
        decimals = decimals_;
        description = description_;
        owner = msg.sender;
        _update(initialAnswer);
    }

    /// Starts a new round with `answer` (devnet control; deployer only).
    function updateAnswer(int256 answer) external {
        if (msg.sender != owner) revert NotOwner();
        _update(answer);
    }

    function latestAnswer() external view returns (int256) {
        return rounds[latestRound].answer;
    }

    function latestTimestamp() external view returns (uint256) {
        return rounds[latestRound].updatedAt;
    }

    function latestRoundData()
        external
        view
        returns (uint80 roundId, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        return getRoundData(latestRound);
    }

    function getRoundData(uint80 roundId)
        public
        view
        returns (uint80, int256 answer, uint256 startedAt, uint256 updatedAt, uint80 answeredInRound)
    {
        Round memory r = rounds[roundId];
        if (r.updatedAt == 0) revert NoDataPresent();
        return (roundId, r.answer, r.startedAt, r.updatedAt, roundId);
    }

    function _update(int256 answer) private {
        uint80 id = ++latestRound;
        rounds[id] = Round(answer, block.timestamp, block.timestamp);
        emit NewRound(id, msg.sender, block.timestamp);
        emit AnswerUpdated(answer, id, block.timestamp);
    }
}
